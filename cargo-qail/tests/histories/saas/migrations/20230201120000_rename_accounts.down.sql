ALTER TABLE users RENAME COLUMN display_name TO full_name; ALTER TABLE users RENAME TO accounts;

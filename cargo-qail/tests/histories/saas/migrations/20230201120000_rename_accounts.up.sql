ALTER TABLE accounts RENAME TO users;
ALTER TABLE users RENAME COLUMN full_name TO display_name;

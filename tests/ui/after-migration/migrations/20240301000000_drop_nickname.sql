ALTER TABLE users DROP COLUMN nickname;

-- A type from an extension.
CREATE EXTENSION IF NOT EXISTS citext;
CREATE TABLE logins (id int PRIMARY KEY, email citext NOT NULL UNIQUE, aliases citext[]);

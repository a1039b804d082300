-- Enums, ALTER TYPE ADD VALUE (BEFORE/AFTER), enum columns.
CREATE TYPE mood AS ENUM ('sad', 'happy');
ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy';
ALTER TYPE mood ADD VALUE 'ecstatic' AFTER 'happy';
ALTER TYPE mood ADD VALUE 'furious' BEFORE 'sad';
ALTER TYPE mood ADD VALUE IF NOT EXISTS 'ok';
ALTER TYPE mood ADD VALUE 'bored';

CREATE TYPE empty_enum AS ENUM ();

CREATE TABLE people (id int PRIMARY KEY, current mood NOT NULL DEFAULT 'sad', history mood[]);

CREATE TYPE old_name AS ENUM ('x', 'y');
CREATE TABLE renamed_users (id int PRIMARY KEY, kind old_name, kinds old_name[]);
ALTER TYPE old_name RENAME TO new_name;
ALTER TYPE new_name RENAME VALUE 'y' TO 'z';

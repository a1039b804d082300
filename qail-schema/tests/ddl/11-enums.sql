-- Enums, ALTER TYPE ADD VALUE (BEFORE/AFTER), enum columns.
CREATE TYPE mood AS ENUM ('sad', 'happy');
ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy';
ALTER TYPE mood ADD VALUE 'ecstatic' AFTER 'happy';
ALTER TYPE mood ADD VALUE 'furious' BEFORE 'sad';
ALTER TYPE mood ADD VALUE IF NOT EXISTS 'ok';
ALTER TYPE mood ADD VALUE 'bored';

CREATE TYPE empty_enum AS ENUM ();

CREATE TABLE people (id int PRIMARY KEY, current mood NOT NULL DEFAULT 'sad', history mood[]);

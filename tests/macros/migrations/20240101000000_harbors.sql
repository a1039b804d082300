-- the harbors
CREATE TABLE mig_harbors (id bigint PRIMARY KEY, name text NOT NULL);

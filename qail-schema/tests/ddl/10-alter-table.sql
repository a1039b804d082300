-- ALTER TABLE in all the forms the import follows.
CREATE TABLE crew (id int, name text, rank text, age int);
CREATE TABLE vessels (id int PRIMARY KEY);

ALTER TABLE crew ADD COLUMN vessel int;
ALTER TABLE crew ADD COLUMN IF NOT EXISTS vessel int;
ALTER TABLE crew ADD COLUMN joined date NOT NULL DEFAULT CURRENT_DATE;
ALTER TABLE crew DROP COLUMN age;
ALTER TABLE crew RENAME COLUMN rank TO grade;
ALTER TABLE crew ALTER COLUMN id TYPE bigint;
ALTER TABLE crew ALTER COLUMN id SET NOT NULL;
ALTER TABLE crew ALTER COLUMN name SET NOT NULL;
ALTER TABLE crew ALTER COLUMN name DROP NOT NULL;
ALTER TABLE crew ALTER COLUMN grade SET DEFAULT 'deckhand';
ALTER TABLE crew ALTER COLUMN joined DROP DEFAULT;
ALTER TABLE crew ALTER COLUMN grade SET DATA TYPE varchar(20);
ALTER TABLE crew ADD PRIMARY KEY (id);
ALTER TABLE crew ADD CONSTRAINT crew_vessel_fk FOREIGN KEY (vessel) REFERENCES vessels (id);
ALTER TABLE crew ADD CONSTRAINT crew_name_uq UNIQUE (name);
ALTER TABLE crew ADD CONSTRAINT crew_grade_present CHECK (grade IS NOT NULL);
ALTER TABLE crew RENAME TO sailors;
ALTER TABLE vessels RENAME TO ships;

CREATE TABLE temp_things (a int PRIMARY KEY, b int REFERENCES ships, c int UNIQUE);
ALTER TABLE temp_things DROP CONSTRAINT temp_things_b_fkey;
ALTER TABLE temp_things DROP CONSTRAINT temp_things_c_key;
ALTER TABLE temp_things DROP CONSTRAINT temp_things_pkey;

CREATE TABLE keyed (a int, b int, c int, d int,
    CONSTRAINT keyed_main PRIMARY KEY (a),
    CONSTRAINT keyed_bc UNIQUE (b, c));
ALTER TABLE keyed ADD CONSTRAINT keyed_d UNIQUE (d);
ALTER TABLE keyed RENAME CONSTRAINT keyed_d TO keyed_d_renamed;
ALTER TABLE keyed DROP CONSTRAINT keyed_main;
ALTER TABLE keyed DROP CONSTRAINT keyed_bc;
CREATE UNIQUE INDEX keyed_c_uq ON keyed (c);
CREATE UNIQUE INDEX ON keyed (a, d);
DROP INDEX keyed_c_uq;
DROP INDEX keyed_a_d_idx;
ALTER TABLE keyed RENAME TO keyed_renamed;
ALTER TABLE keyed_renamed DROP CONSTRAINT keyed_d_renamed;
ALTER TABLE keyed_renamed ADD CONSTRAINT keyed_pk PRIMARY KEY (b);

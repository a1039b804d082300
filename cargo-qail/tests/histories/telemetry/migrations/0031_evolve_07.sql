ALTER TABLE calibrations ADD COLUMN id serial PRIMARY KEY;

ALTER TABLE calibrations DROP COLUMN id;

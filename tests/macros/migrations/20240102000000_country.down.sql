ALTER TABLE mig_harbors DROP COLUMN country;

ALTER TABLE mig_harbors ADD COLUMN country text;

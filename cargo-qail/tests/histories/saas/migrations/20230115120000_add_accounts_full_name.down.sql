ALTER TABLE accounts DROP COLUMN full_name;

ALTER TABLE accounts DROP COLUMN verified_at;

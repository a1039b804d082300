ALTER TABLE accounts ADD COLUMN IF NOT EXISTS full_name text;

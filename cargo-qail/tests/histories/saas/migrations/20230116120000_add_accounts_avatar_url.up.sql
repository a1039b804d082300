ALTER TABLE accounts ADD COLUMN IF NOT EXISTS avatar_url text;

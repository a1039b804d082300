ALTER TABLE accounts ADD COLUMN IF NOT EXISTS verified_at timestamptz;

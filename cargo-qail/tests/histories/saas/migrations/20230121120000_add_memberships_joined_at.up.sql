ALTER TABLE memberships ADD COLUMN IF NOT EXISTS joined_at timestamptz NOT NULL DEFAULT now();

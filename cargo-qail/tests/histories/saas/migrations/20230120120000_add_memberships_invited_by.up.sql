ALTER TABLE memberships ADD COLUMN IF NOT EXISTS invited_by integer REFERENCES accounts (id);

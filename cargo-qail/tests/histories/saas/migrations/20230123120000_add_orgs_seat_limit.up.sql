ALTER TABLE orgs ADD COLUMN IF NOT EXISTS seat_limit integer CHECK (seat_limit > 0);

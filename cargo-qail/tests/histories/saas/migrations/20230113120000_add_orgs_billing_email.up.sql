ALTER TABLE orgs ADD COLUMN IF NOT EXISTS billing_email text;

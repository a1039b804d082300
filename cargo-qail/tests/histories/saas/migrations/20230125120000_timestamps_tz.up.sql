ALTER TABLE orgs ALTER COLUMN created_at TYPE timestamptz;
ALTER TABLE accounts ALTER COLUMN created_at TYPE timestamptz USING created_at AT TIME ZONE 'UTC';

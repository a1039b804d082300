ALTER TABLE sites ADD COLUMN contact jsonb, ADD COLUMN notes text;

ALTER TABLE sites ALTER COLUMN timezone SET DEFAULT 'Europe/Berlin';

ALTER TABLE projects ADD COLUMN IF NOT EXISTS description text;

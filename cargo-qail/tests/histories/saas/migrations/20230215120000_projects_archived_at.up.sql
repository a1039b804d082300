ALTER TABLE projects ADD COLUMN archived_at timestamptz;
UPDATE projects SET archived_at = now() WHERE archived;
ALTER TABLE projects DROP COLUMN archived;

ALTER TABLE projects DROP COLUMN settings;

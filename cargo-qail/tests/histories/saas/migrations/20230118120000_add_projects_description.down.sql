ALTER TABLE projects DROP COLUMN description;

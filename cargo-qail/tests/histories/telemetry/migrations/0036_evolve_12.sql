ALTER TABLE devices ADD COLUMN model varchar(64) NOT NULL DEFAULT 'generic';

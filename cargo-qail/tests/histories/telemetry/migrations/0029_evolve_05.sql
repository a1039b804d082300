ALTER TABLE devices RENAME COLUMN firmware TO firmware_version;

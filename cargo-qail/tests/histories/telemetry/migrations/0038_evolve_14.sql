ALTER TABLE firmware_versions ADD COLUMN checksum bytea;

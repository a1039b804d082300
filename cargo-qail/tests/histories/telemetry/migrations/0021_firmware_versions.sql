CREATE TABLE firmware_versions (
    version text PRIMARY KEY,
    released_at date NOT NULL,
    notes text
);
ALTER TABLE devices ADD CONSTRAINT devices_firmware_fkey FOREIGN KEY (firmware) REFERENCES firmware_versions (version) NOT VALID;
ALTER TABLE devices VALIDATE CONSTRAINT devices_firmware_fkey;

ALTER TABLE accounts DROP COLUMN mfa_enabled;

ALTER TABLE api_keys DROP COLUMN revoked_at;

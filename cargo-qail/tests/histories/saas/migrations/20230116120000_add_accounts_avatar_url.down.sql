ALTER TABLE accounts DROP COLUMN avatar_url;

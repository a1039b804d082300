ALTER TABLE memberships DROP COLUMN joined_at;

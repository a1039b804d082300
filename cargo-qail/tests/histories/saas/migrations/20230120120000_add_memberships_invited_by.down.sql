ALTER TABLE memberships DROP COLUMN invited_by;

ALTER TABLE orgs DROP COLUMN seat_limit;

ALTER TABLE orgs DROP COLUMN billing_email;

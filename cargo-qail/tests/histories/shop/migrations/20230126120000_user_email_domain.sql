ALTER TABLE users ADD COLUMN contact_email email_address;
UPDATE users SET contact_email = email;

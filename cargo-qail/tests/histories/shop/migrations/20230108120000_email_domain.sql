CREATE DOMAIN email_address AS text CHECK (VALUE ~ '^[^@]+@[^@]+$');

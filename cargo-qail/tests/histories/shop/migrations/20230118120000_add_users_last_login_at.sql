ALTER TABLE users ADD COLUMN last_login_at timestamptz;

ALTER TABLE devices ADD COLUMN last_seen_at timestamptz;

CREATE INDEX devices_last_seen_idx ON devices (last_seen_at DESC NULLS LAST);

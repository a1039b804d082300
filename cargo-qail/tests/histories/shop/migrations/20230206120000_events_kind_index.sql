CREATE INDEX events_kind_idx ON events (kind);

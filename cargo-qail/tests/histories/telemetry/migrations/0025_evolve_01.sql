ALTER TABLE devices ADD COLUMN battery_pct smallint CHECK (battery_pct BETWEEN 0 AND 100);

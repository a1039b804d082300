ALTER TABLE devices ALTER COLUMN battery_pct TYPE integer;

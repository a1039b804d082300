DO $$
BEGIN
    CREATE TABLE settings (key text PRIMARY KEY, value jsonb NOT NULL);
    CREATE INDEX settings_value_idx ON settings USING gin (value);
END
$$;

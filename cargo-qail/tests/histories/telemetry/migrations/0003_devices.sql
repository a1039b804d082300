CREATE TABLE devices (
    id bigserial PRIMARY KEY,
    serial device_serial UNIQUE,
    site_id integer REFERENCES sites (id),
    firmware text,
    installed_at timestamptz NOT NULL DEFAULT now()
);

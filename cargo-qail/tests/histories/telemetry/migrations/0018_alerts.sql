CREATE TYPE severity AS ENUM ('info', 'warning', 'critical');
CREATE TABLE alerts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    device_id bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    severity severity NOT NULL,
    message text NOT NULL,
    raised_at timestamptz NOT NULL DEFAULT now(),
    cleared_at timestamptz
);
CREATE INDEX alerts_open_idx ON alerts (device_id) WHERE cleared_at IS NULL;

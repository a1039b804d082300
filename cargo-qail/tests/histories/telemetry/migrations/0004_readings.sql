CREATE TABLE readings (
    device_id bigint NOT NULL REFERENCES devices (id),
    at timestamptz NOT NULL,
    kind reading_kind NOT NULL,
    value double precision NOT NULL,
    PRIMARY KEY (device_id, at, kind)
) PARTITION BY RANGE (at);

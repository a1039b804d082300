CREATE TYPE calibration_window AS RANGE (subtype = timestamptz);
CREATE TABLE calibrations (
    device_id bigint NOT NULL REFERENCES devices (id),
    valid calibration_window NOT NULL,
    offset_value double precision NOT NULL DEFAULT 0
);

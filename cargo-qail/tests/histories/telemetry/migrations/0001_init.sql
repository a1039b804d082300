CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);
CREATE DOMAIN device_serial AS text NOT NULL CHECK (length(VALUE) BETWEEN 6 AND 32);
CREATE TYPE geo_point AS (lat double precision, lon double precision);
CREATE TYPE reading_kind AS ENUM ('temperature', 'humidity');

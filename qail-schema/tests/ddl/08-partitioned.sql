-- A partitioned table with range, list and default partitions.
CREATE TABLE sensors (id int PRIMARY KEY);

CREATE TABLE readings (
    sensor int NOT NULL REFERENCES sensors,
    at date NOT NULL,
    value float8 DEFAULT 0,
    kind text,
    PRIMARY KEY (sensor, at),
    CHECK (kind IS NOT NULL)
) PARTITION BY RANGE (at);

CREATE TABLE readings_2024 PARTITION OF readings FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE readings_2025 PARTITION OF readings FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE readings_other PARTITION OF readings DEFAULT;

CREATE TABLE events (region text NOT NULL, payload jsonb) PARTITION BY LIST (region);
CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');

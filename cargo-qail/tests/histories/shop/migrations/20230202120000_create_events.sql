CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY,
    happened_at timestamptz NOT NULL,
    kind text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (id, happened_at)
) PARTITION BY RANGE (happened_at);

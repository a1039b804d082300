CREATE TABLE api_keys (
    id serial PRIMARY KEY,
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    prefix char(8) NOT NULL,
    hash bytea NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_prefix_key ON api_keys (prefix);

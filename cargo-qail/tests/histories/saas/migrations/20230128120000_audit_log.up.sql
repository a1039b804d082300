CREATE TABLE audit_log (
    id bigserial PRIMARY KEY,
    org_id integer REFERENCES orgs (id) ON DELETE SET NULL,
    actor_id integer REFERENCES accounts (id) ON DELETE SET NULL,
    action text NOT NULL,
    detail jsonb,
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_org_at_idx ON audit_log (org_id, at DESC);

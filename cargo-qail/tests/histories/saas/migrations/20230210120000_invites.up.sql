CREATE TABLE invites (
    token text PRIMARY KEY,
    org_id integer NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    email text NOT NULL,
    role member_role NOT NULL DEFAULT 'member',
    expires_at timestamptz NOT NULL
);

CREATE TABLE projects (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id integer NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name text NOT NULL,
    archived boolean NOT NULL DEFAULT false,
    UNIQUE (org_id, name)
);

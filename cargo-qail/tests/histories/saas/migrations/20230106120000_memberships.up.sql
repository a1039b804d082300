CREATE TABLE memberships (
    org_id integer NOT NULL REFERENCES orgs ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES accounts ON DELETE CASCADE,
    role member_role NOT NULL DEFAULT 'member',
    PRIMARY KEY (org_id, account_id)
);

-- Unique indexes act as unique constraints unless partial or on expressions; statements
-- without effect on the snapshot are ignored.
CREATE TABLE accounts (id int PRIMARY KEY, email text, tenant int, login text, deleted bool);

CREATE UNIQUE INDEX accounts_email_uq ON accounts (email);
CREATE UNIQUE INDEX accounts_tenant_login ON accounts (tenant, login);
CREATE UNIQUE INDEX accounts_live_login ON accounts (login) WHERE NOT deleted;
CREATE UNIQUE INDEX accounts_lower_email ON accounts (lower(email));
CREATE INDEX accounts_tenant ON accounts (tenant);

COMMENT ON TABLE accounts IS 'user accounts';
COMMENT ON COLUMN accounts.email IS 'login e-mail';
GRANT SELECT ON accounts TO PUBLIC;
CREATE SEQUENCE invoice_numbers START 1000;
INSERT INTO accounts (id, email) VALUES (1, 'a@example.com');
ANALYZE accounts;

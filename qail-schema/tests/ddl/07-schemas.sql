-- Several schemas, SET search_path, cross-schema references.
CREATE SCHEMA app;
CREATE SCHEMA audit;

CREATE TABLE app.accounts (id uuid PRIMARY KEY, email text NOT NULL);

SET search_path TO app, public;

CREATE TABLE sessions (id bigserial PRIMARY KEY, account uuid NOT NULL REFERENCES accounts);
CREATE TYPE app.role AS ENUM ('admin', 'user');
CREATE TABLE members (account uuid REFERENCES app.accounts (id), role role NOT NULL);

CREATE TABLE audit.log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account uuid REFERENCES app.accounts,
    at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE public.settings (key text PRIMARY KEY, value jsonb);

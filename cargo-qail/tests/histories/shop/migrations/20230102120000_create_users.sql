CREATE TABLE users (
    id bigserial PRIMARY KEY,
    email varchar(255) NOT NULL,
    name text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_idx ON users (email);

SET search_path TO billing, public;
CREATE TABLE plans (
    id smallserial PRIMARY KEY,
    code text NOT NULL UNIQUE,
    monthly_cents integer NOT NULL,
    seats integer
);
RESET search_path;

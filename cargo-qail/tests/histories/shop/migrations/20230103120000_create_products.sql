CREATE TABLE products (
    id serial PRIMARY KEY,
    sku text NOT NULL UNIQUE,
    title text NOT NULL,
    price_cents integer NOT NULL CHECK (price_cents >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);

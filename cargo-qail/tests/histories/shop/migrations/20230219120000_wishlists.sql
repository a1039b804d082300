CREATE TABLE wishlists (
    user_id bigint NOT NULL REFERENCES users (id),
    product_id integer NOT NULL REFERENCES products (id),
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, product_id)
);
COMMENT ON TABLE wishlists IS 'products a user saved for later';

CREATE TABLE carts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id bigint REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE cart_items (
    cart_id uuid NOT NULL REFERENCES carts (id) ON DELETE CASCADE,
    product_id integer NOT NULL REFERENCES products (id),
    quantity integer NOT NULL DEFAULT 1,
    UNIQUE (cart_id, product_id)
);

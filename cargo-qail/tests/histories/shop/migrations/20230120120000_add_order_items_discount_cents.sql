ALTER TABLE order_items ADD COLUMN discount_cents integer NOT NULL DEFAULT 0;

ALTER TABLE orders ADD COLUMN shipping_address jsonb;

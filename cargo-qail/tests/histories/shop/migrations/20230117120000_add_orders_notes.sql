ALTER TABLE orders ADD COLUMN notes text;

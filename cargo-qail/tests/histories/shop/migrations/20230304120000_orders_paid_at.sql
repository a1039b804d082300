ALTER TABLE orders ADD COLUMN paid_at timestamptz, ADD COLUMN refunded_at timestamptz;

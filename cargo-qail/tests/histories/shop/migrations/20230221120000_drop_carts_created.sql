ALTER TABLE carts DROP COLUMN created_at, ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

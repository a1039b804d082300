ALTER TABLE products ALTER COLUMN price_cents TYPE bigint;

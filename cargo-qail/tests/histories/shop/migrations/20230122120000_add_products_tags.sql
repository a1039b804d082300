ALTER TABLE products ADD COLUMN tags text[] NOT NULL DEFAULT '{}';

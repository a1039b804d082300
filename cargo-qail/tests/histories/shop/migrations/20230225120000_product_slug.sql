ALTER TABLE products ADD COLUMN slug text;
UPDATE products SET slug = lower(replace(title, ' ', '-'));
ALTER TABLE products ALTER COLUMN slug SET NOT NULL;
ALTER TABLE products ADD CONSTRAINT products_slug_key UNIQUE (slug);

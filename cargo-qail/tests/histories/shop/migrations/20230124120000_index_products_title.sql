CREATE INDEX products_title_idx ON products (lower(title));

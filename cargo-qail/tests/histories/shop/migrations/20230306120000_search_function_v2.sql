CREATE FUNCTION search_products(q text) RETURNS SETOF products
LANGUAGE sql STABLE AS $$ SELECT * FROM products WHERE title ILIKE '%' || q || '%' $$;

CREATE FUNCTION search_products(q text, max_rows integer DEFAULT 20)
RETURNS TABLE (id integer, title text, price_cents bigint)
LANGUAGE sql STABLE AS $$
    SELECT id, title, price_cents FROM products WHERE title ILIKE '%' || q || '%' LIMIT max_rows
$$;

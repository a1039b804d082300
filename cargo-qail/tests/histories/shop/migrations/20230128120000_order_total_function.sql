CREATE FUNCTION order_total(p_order bigint) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(sum(quantity * unit_price_cents), 0) FROM order_items WHERE order_id = p_order $$;

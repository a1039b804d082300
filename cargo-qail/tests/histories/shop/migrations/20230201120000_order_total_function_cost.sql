CREATE OR REPLACE FUNCTION order_total(p_order bigint) RETURNS bigint
    AS $$ SELECT coalesce(sum(quantity * unit_price_cents - discount_cents), 0) FROM order_items WHERE order_id = p_order $$
    LANGUAGE sql STABLE COST 50;

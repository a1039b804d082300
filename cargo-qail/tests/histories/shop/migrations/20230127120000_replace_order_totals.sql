CREATE OR REPLACE VIEW order_totals AS
SELECT o.id, o.user_id, sum(i.quantity * i.unit_price_cents) AS total,
       sum(i.discount_cents) AS discount
FROM orders o JOIN order_items i ON i.order_id = o.id
GROUP BY o.id, o.user_id;

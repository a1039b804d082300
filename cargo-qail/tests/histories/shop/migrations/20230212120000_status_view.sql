DROP VIEW order_totals;
CREATE VIEW order_totals AS
SELECT o.id, o.user_id, o.status, o.currency,
       sum(i.quantity * i.unit_price_cents) AS total
FROM orders o JOIN order_items i ON i.order_id = o.id
GROUP BY o.id;

-- Views and materialized views (their columns need the analyzer; the import warns).
CREATE TABLE orders (id int PRIMARY KEY, total numeric NOT NULL, customer text);
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
CREATE MATERIALIZED VIEW order_totals AS SELECT customer, sum(total) AS total FROM orders GROUP BY customer;
CREATE OR REPLACE VIEW big_orders AS SELECT id, total, customer FROM orders WHERE total > 100;

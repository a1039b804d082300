CREATE VIEW product_ratings AS
SELECT p.id AS product_id, p.title, avg(r.rating) AS average, count(r.id) AS reviews
FROM products p LEFT JOIN reviews r ON r.product_id = p.id
GROUP BY p.id, p.title;

DROP VIEW product_ratings;
CREATE MATERIALIZED VIEW product_ratings AS
SELECT p.id AS product_id, avg(r.rating)::numeric(3, 2) AS average, count(r.id) AS reviews
FROM products p LEFT JOIN product_reviews r ON r.product_id = p.id
GROUP BY p.id;
CREATE UNIQUE INDEX product_ratings_product_id_idx ON product_ratings (product_id);

-- Catalogue ---------------------------------------------------------------------------------

SELECT id, slug, title, diet, minutes, kcal FROM published_recipes WHERE diet = ANY ($1) ORDER BY title LIMIT $2 OFFSET $3;

SELECT r.id, r.title, r.minutes, (r.per_serving).kcal AS kcal, (r.per_serving).protein_g AS protein
FROM recipes r
WHERE r.published_at IS NOT NULL AND r.minutes <= $1 AND r.difficulty <> 'hard'
ORDER BY (r.per_serving).kcal NULLS LAST;

SELECT r.id, r.title, ts_rank(r.search, websearch_to_tsquery('english', $1)) AS rank
FROM recipes r
WHERE r.search @@ websearch_to_tsquery('english', $1)
ORDER BY rank DESC
LIMIT 20;

SELECT recipe_id, title, minutes, kcal FROM recipes_for($1) ORDER BY minutes;

SELECT f.title, f.kcal, recipe_cost(f.recipe_id) AS cost FROM recipes_for('vegan', 30) f;

SELECT r.title, s.position, s.instruction, s.timer
FROM recipe_steps s JOIN recipes r ON r.id = s.recipe_id
WHERE r.slug = $1
ORDER BY s.position;

SELECT i.name, ri.quantity, i.unit, ri.optional, i.allergens
FROM recipe_ingredients ri JOIN ingredients i ON i.id = ri.ingredient_id
WHERE ri.recipe_id = $1
ORDER BY ri.optional, i.name;

SELECT r.id, r.title, array_agg(t.name ORDER BY t.name) AS tags
FROM recipes r
LEFT JOIN recipe_tags rt ON rt.recipe_id = r.id
LEFT JOIN tags t ON t.id = rt.tag_id
GROUP BY r.id
ORDER BY r.title;

SELECT r.id, r.title FROM recipes r
WHERE NOT EXISTS (
    SELECT 1 FROM recipe_ingredients ri JOIN ingredients i ON i.id = ri.ingredient_id
    WHERE ri.recipe_id = r.id AND i.allergens && $1::text[]
);

SELECT DISTINCT a AS allergen FROM ingredients, unnest(allergens) AS a ORDER BY 1;

SELECT allergen FROM allergen_list() AS allergen;

INSERT INTO recipes (slug, title, diet, difficulty, minutes, servings, per_serving, description)
VALUES ($1, $2, $3, $4, $5, $6, ROW($7, $8, $9, $10), $11)
RETURNING id;

UPDATE recipes SET published_at = now(), search = to_tsvector('english', title || ' ' || coalesce(description, ''))
WHERE id = $1 AND published_at IS NULL
RETURNING published_at;

INSERT INTO recipe_tags (recipe_id, tag_id)
SELECT $1, t.id FROM tags t WHERE t.name = ANY ($2::text[])
ON CONFLICT DO NOTHING;

INSERT INTO tags (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id;

-- Prices and costs ----------------------------------------------------------------------------

SELECT i.name, ingredient_price(i.id) AS today, ingredient_price(i.id, current_date - 30) AS month_ago
FROM ingredients i
WHERE i.supplier_id = $1;

INSERT INTO ingredient_prices (ingredient_id, valid_from, price_per_unit)
VALUES ($1, $2, $3)
ON CONFLICT (ingredient_id, valid_from) DO UPDATE SET price_per_unit = EXCLUDED.price_per_unit;

SELECT r.title, recipe_cost(r.id) AS cost, recipe_cost(r.id) / r.servings AS per_portion
FROM recipes r
WHERE r.published_at IS NOT NULL
ORDER BY cost DESC
LIMIT 10;

SELECT ip.ingredient_id, ip.valid_from, ip.price_per_unit,
       ip.price_per_unit - lag(ip.price_per_unit) OVER w AS change,
       round(100 * (ip.price_per_unit / nullif(lag(ip.price_per_unit) OVER w, 0) - 1), 1) AS pct
FROM ingredient_prices ip
WINDOW w AS (PARTITION BY ip.ingredient_id ORDER BY ip.valid_from);

SELECT s.name AS supplier, count(i.id) AS ingredients, avg(ingredient_price(i.id)) AS mean_price
FROM suppliers s LEFT JOIN ingredients i ON i.supplier_id = s.id
WHERE s.active
GROUP BY s.id;

-- Customers ----------------------------------------------------------------------------------

INSERT INTO customers (email, name, diet, marketing_opt_in) VALUES (lower($1), $2, $3, $4) RETURNING id, created_at;

SELECT c.id, c.name, c.diet, a.line1, a.city, a.postcode
FROM customers c
LEFT JOIN addresses a ON a.customer_id = c.id AND a.is_default
WHERE lower(c.email) = lower($1) AND c.deleted_at IS NULL;

UPDATE customers SET dislikes = array_append(dislikes, $2) WHERE id = $1 AND NOT dislikes @> ARRAY[$2::int4] RETURNING dislikes;

UPDATE customers SET deleted_at = now(), email = 'deleted+' || id || '@invalid' WHERE id = $1 RETURNING deleted_at;

WITH old_default AS (
    UPDATE addresses SET is_default = false WHERE customer_id = $1 AND is_default RETURNING id
)
INSERT INTO addresses (customer_id, line1, line2, city, postcode, is_default)
VALUES ($1, $2, $3, $4, $5, true)
RETURNING id, (SELECT count(*) FROM old_default) AS replaced;

SELECT a.id, a.line1, a.line2, a.city, a.postcode FROM addresses a WHERE a.customer_id = $1 ORDER BY a.is_default DESC, a.id;

SELECT customer_id, name, orders, spent, last_order FROM customer_value WHERE spent > $1 ORDER BY spent DESC;

SELECT c.diet, count(*) AS customers, count(*) FILTER (WHERE c.marketing_opt_in) AS reachable
FROM customers c WHERE c.deleted_at IS NULL GROUP BY c.diet ORDER BY customers DESC;

SELECT date_trunc('month', created_at) AS month, count(*) AS signups,
       sum(count(*)) OVER (ORDER BY date_trunc('month', created_at)) AS total
FROM customers GROUP BY 1 ORDER BY 1;

-- Subscriptions ----------------------------------------------------------------------------------

INSERT INTO subscriptions (customer_id, address_id, recipes_per_week, people, slot, weekly_price)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, started_on;

UPDATE subscriptions SET paused_until = next_monday(current_date + 7 * $2) WHERE id = $1 AND cancelled_on IS NULL RETURNING paused_until;

SELECT s.id, c.name, s.recipes_per_week, s.people, s.slot, s.weekly_price
FROM subscriptions s JOIN customers c ON c.id = s.customer_id
WHERE s.cancelled_on IS NULL AND (s.paused_until IS NULL OR s.paused_until < $1);

SELECT slot, recipes_per_week, count(*) AS subs, sum(weekly_price) AS weekly_revenue
FROM subscriptions
WHERE cancelled_on IS NULL
GROUP BY CUBE (slot, recipes_per_week)
ORDER BY slot NULLS LAST, recipes_per_week NULLS LAST;

SELECT date_trunc('month', started_on) AS cohort,
       count(*) AS started,
       count(*) FILTER (WHERE cancelled_on IS NULL) AS still_active,
       round(avg(coalesce(cancelled_on, current_date) - started_on)) AS mean_days
FROM subscriptions
GROUP BY 1
ORDER BY 1;

-- Weekly boxes -------------------------------------------------------------------------------------

INSERT INTO boxes (week, theme) VALUES (next_monday($1), $2) ON CONFLICT (week) DO UPDATE SET theme = EXCLUDED.theme RETURNING id, week;

SELECT b.week, b.theme, r.title, br.featured
FROM boxes b JOIN box_recipes br ON br.box_id = b.id JOIN recipes r ON r.id = br.recipe_id
WHERE b.week = next_monday(current_date)
ORDER BY br.featured DESC, r.title;

SELECT b.week, count(br.recipe_id) AS recipes, bool_or(br.featured) AS has_featured,
       array_agg(r.diet ORDER BY r.diet) AS diets
FROM boxes b LEFT JOIN box_recipes br ON br.box_id = b.id LEFT JOIN recipes r ON r.id = br.recipe_id
GROUP BY b.id
ORDER BY b.week DESC
LIMIT 8;

UPDATE boxes SET locked = true WHERE week <= current_date + 3 AND NOT locked RETURNING id, week;

SELECT week FROM generate_series(next_monday(current_date)::timestamp, next_monday(current_date) + interval '5 weeks', interval '1 week') AS week
WHERE week::date NOT IN (SELECT b.week FROM boxes b);

-- Orders ---------------------------------------------------------------------------------------------

WITH new_order AS (
    INSERT INTO orders (customer_id, subscription_id, box_id, state, placed_at)
    VALUES ($1, $2, $3, 'placed', now())
    RETURNING id
), items AS (
    INSERT INTO order_items (order_id, recipe_id, portions, unit_price)
    SELECT new_order.id, r, $4, $5 FROM new_order, unnest($6::int4[]) AS r
    RETURNING portions * unit_price AS line_total
)
UPDATE orders o SET subtotal = (SELECT coalesce(sum(line_total), 0) FROM items)
FROM new_order WHERE o.id = new_order.id
RETURNING o.id, o.subtotal;

SELECT o.id, o.state, o.placed_at, o.subtotal - o.discount AS total, count(oi.recipe_id) AS recipes
FROM orders o LEFT JOIN order_items oi ON oi.order_id = o.id
WHERE o.customer_id = $1
GROUP BY o.id
ORDER BY o.placed_at DESC NULLS FIRST
LIMIT $2;

SELECT id, placed_at FROM orders WHERE customer_id = $1 AND (placed_at, id) < ($2, $3) ORDER BY placed_at DESC, id DESC LIMIT 25;

UPDATE orders SET state = 'packed' WHERE id = ANY ($1) AND state = 'placed' RETURNING id;

UPDATE orders SET meta = meta || jsonb_build_object('note', $2::text, 'at', now()) WHERE id = $1 RETURNING meta;

SELECT id, meta ->> 'note' AS note, meta #>> '{gift,to}' AS gift_to FROM orders WHERE meta ? 'gift';

SELECT o.id, pc.code, coalesce(pc.amount_off, o.subtotal * pc.percent_off / 100) AS off
FROM orders o JOIN promo_redemptions pr ON pr.order_id = o.id JOIN promo_codes pc ON pc.code = pr.code
WHERE o.id = $1;

WITH redeemed AS (
    INSERT INTO promo_redemptions (code, order_id)
    SELECT pc.code, $2 FROM promo_codes pc
    WHERE pc.code = $1 AND pc.valid_during @> current_date
      AND (pc.max_uses IS NULL OR pc.max_uses > (SELECT count(*) FROM promo_redemptions r WHERE r.code = pc.code))
    RETURNING code
)
UPDATE orders o SET discount = coalesce(pc.amount_off, o.subtotal * pc.percent_off / 100)
FROM redeemed JOIN promo_codes pc ON pc.code = redeemed.code
WHERE o.id = $2
RETURNING o.discount;

SELECT r.title, sum(oi.portions) AS portions, sum(oi.portions * oi.unit_price) AS revenue,
       rank() OVER (ORDER BY sum(oi.portions) DESC) AS popularity
FROM order_items oi JOIN orders o ON o.id = oi.order_id JOIN recipes r ON r.id = oi.recipe_id
WHERE o.placed_at >= $1
GROUP BY r.id
ORDER BY popularity
LIMIT 10;

SELECT to_char(placed_at, 'IYYY-IW') AS week, state, count(*) AS orders, sum(subtotal - discount) AS net
FROM orders
WHERE placed_at IS NOT NULL
GROUP BY GROUPING SETS ((to_char(placed_at, 'IYYY-IW'), state), (to_char(placed_at, 'IYYY-IW')))
ORDER BY 1, 2;

SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY subtotal) AS median_basket,
       percentile_cont(ARRAY[0.1, 0.9]) WITHIN GROUP (ORDER BY subtotal) AS spread,
       mode() WITHIN GROUP (ORDER BY state) AS usual_state
FROM orders;

-- Deliveries ------------------------------------------------------------------------------------------

INSERT INTO deliveries (order_id, address_id, slot, time_window)
SELECT o.id, s.address_id, s.slot, tstzrange($2, $3)
FROM orders o JOIN subscriptions s ON s.id = o.subscription_id
WHERE o.id = $1
RETURNING id, time_window;

UPDATE deliveries d SET courier_id = c.id
FROM couriers c
WHERE d.id = $1 AND c.id = $2 AND $3 = ANY (c.zones)
RETURNING d.id, c.name;

UPDATE deliveries SET delivered_at = now(), proof = $2 WHERE id = $1 AND delivered_at IS NULL RETURNING delivered_at, upper(time_window) < delivered_at AS late;

SELECT d.id, a.postcode, a.line1, lower(d.time_window) AS from_ts, upper(d.time_window) AS to_ts, c.name AS courier
FROM deliveries d
JOIN addresses a ON a.id = d.address_id
LEFT JOIN couriers c ON c.id = d.courier_id
WHERE d.time_window && tstzrange($1, $2) AND d.delivered_at IS NULL
ORDER BY lower(d.time_window), a.postcode;

SELECT c.name, count(d.id) AS delivered,
       avg(d.delivered_at - lower(d.time_window)) AS mean_offset,
       count(*) FILTER (WHERE d.delivered_at > upper(d.time_window)) AS late
FROM couriers c LEFT JOIN deliveries d ON d.courier_id = c.id AND d.delivered_at IS NOT NULL
GROUP BY c.id
ORDER BY late DESC;

SELECT zone, count(*) AS couriers FROM couriers, unnest(zones) WITH ORDINALITY AS z(zone, n) WHERE n = 1 GROUP BY zone;

-- Reviews ----------------------------------------------------------------------------------------------

INSERT INTO reviews (customer_id, recipe_id, stars, body)
VALUES ($1, $2, $3, $4)
ON CONFLICT (customer_id, recipe_id) DO UPDATE SET stars = EXCLUDED.stars, body = EXCLUDED.body, created_at = now()
RETURNING id, created_at;

SELECT r.title, round(avg(v.stars), 2) AS rating, count(v.id) AS reviews,
       count(*) FILTER (WHERE v.stars >= 4) * 100 / nullif(count(v.id), 0) AS pct_happy
FROM recipes r LEFT JOIN reviews v ON v.recipe_id = r.id
GROUP BY r.id
HAVING count(v.id) >= $1
ORDER BY rating DESC NULLS LAST;

SELECT v.stars, v.body, c.name, v.created_at FROM reviews v JOIN customers c ON c.id = v.customer_id
WHERE v.recipe_id = $1 AND v.body IS NOT NULL ORDER BY v.created_at DESC LIMIT 10;

SELECT (SELECT avg(stars) FROM reviews) AS overall, (SELECT count(*) FROM reviews WHERE created_at > now() - interval '7 days') AS this_week;

-- Stock --------------------------------------------------------------------------------------------------

INSERT INTO inventory_movements (ingredient_id, delta, reason, order_id)
SELECT ri.ingredient_id, -(ri.quantity * oi.portions / r.servings), 'packed', oi.order_id
FROM order_items oi
JOIN recipes r ON r.id = oi.recipe_id
JOIN recipe_ingredients ri ON ri.recipe_id = r.id AND NOT ri.optional
WHERE oi.order_id = $1;

SELECT i.name, stock_level(i.id) AS on_hand, i.unit FROM ingredients i WHERE stock_level(i.id) < $1 ORDER BY on_hand;

SELECT ingredient_id, date_trunc('day', at) AS day, sum(delta) AS net,
       sum(sum(delta)) OVER (PARTITION BY ingredient_id ORDER BY date_trunc('day', at)) AS level
FROM inventory_movements
WHERE at >= $1
GROUP BY ingredient_id, date_trunc('day', at);

WITH needed AS (
    SELECT ri.ingredient_id, sum(ri.quantity * s.people * s.recipes_per_week / 2.0) AS qty
    FROM subscriptions s
    JOIN box_recipes br ON br.box_id = $1
    JOIN recipe_ingredients ri ON ri.recipe_id = br.recipe_id
    WHERE s.cancelled_on IS NULL
    GROUP BY ri.ingredient_id
)
SELECT i.name, n.qty, stock_level(i.id) AS on_hand, greatest(n.qty - stock_level(i.id), 0) AS to_order, sp.name AS supplier
FROM needed n
JOIN ingredients i ON i.id = n.ingredient_id
LEFT JOIN suppliers sp ON sp.id = i.supplier_id
ORDER BY to_order DESC;

DELETE FROM inventory_movements WHERE reason = 'test' AND at < $1 RETURNING id, delta;

-- A meal-kit delivery service: suppliers and ingredients with price history, recipes with
-- steps, tags and nutrition, weekly boxes, customers with addresses and subscriptions,
-- orders, couriers and deliveries, reviews, stock movements and promotions.
-- Written for the analyzer's real-application suite.

CREATE TYPE diet AS ENUM ('omnivore', 'vegetarian', 'vegan', 'pescatarian');
CREATE TYPE order_state AS ENUM ('basket', 'placed', 'packed', 'shipped', 'delivered', 'refunded');
CREATE TYPE unit AS ENUM ('g', 'ml', 'piece', 'tbsp', 'tsp');
CREATE TYPE difficulty AS ENUM ('easy', 'medium', 'hard');
CREATE TYPE delivery_slot AS ENUM ('morning', 'afternoon', 'evening');

CREATE DOMAIN postcode AS varchar(10) CHECK (VALUE ~ '^[A-Z0-9 ]+$');
CREATE DOMAIN cents AS int8 CHECK (VALUE >= 0);
CREATE DOMAIN stars AS int2 CHECK (VALUE BETWEEN 1 AND 5);
CREATE DOMAIN label AS text NOT NULL CHECK (VALUE <> '');

CREATE TYPE nutrition AS (kcal int4, protein_g numeric(6, 1), fat_g numeric(6, 1), carbs_g numeric(6, 1));

CREATE TABLE suppliers (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name label,
    country char(2) NOT NULL,
    contact_email text,
    lead_days int2 NOT NULL DEFAULT 2,
    active bool NOT NULL DEFAULT true
);

CREATE TABLE ingredients (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    supplier_id int4 REFERENCES suppliers (id),
    name text NOT NULL UNIQUE,
    unit unit NOT NULL,
    allergens text[] NOT NULL DEFAULT '{}',
    vegan bool NOT NULL,
    shelf_life interval
);

CREATE TABLE ingredient_prices (
    ingredient_id int4 NOT NULL REFERENCES ingredients (id),
    valid_from date NOT NULL,
    price_per_unit numeric(10, 4) NOT NULL,
    PRIMARY KEY (ingredient_id, valid_from)
);

CREATE TABLE recipes (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    title text NOT NULL,
    diet diet NOT NULL,
    difficulty difficulty NOT NULL DEFAULT 'easy',
    minutes int4 NOT NULL,
    servings int2 NOT NULL DEFAULT 2,
    per_serving nutrition,
    description text,
    published_at timestamptz,
    search tsvector
);

CREATE INDEX recipes_published ON recipes (published_at) WHERE published_at IS NOT NULL;

CREATE TABLE recipe_ingredients (
    recipe_id int4 NOT NULL REFERENCES recipes (id) ON DELETE CASCADE,
    ingredient_id int4 NOT NULL REFERENCES ingredients (id),
    quantity numeric(8, 2) NOT NULL,
    optional bool NOT NULL DEFAULT false,
    PRIMARY KEY (recipe_id, ingredient_id)
);

CREATE TABLE recipe_steps (
    recipe_id int4 NOT NULL REFERENCES recipes (id) ON DELETE CASCADE,
    position int2 NOT NULL,
    instruction text NOT NULL,
    timer interval,
    PRIMARY KEY (recipe_id, position)
);

CREATE TABLE tags (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE
);

CREATE TABLE recipe_tags (
    recipe_id int4 NOT NULL REFERENCES recipes (id) ON DELETE CASCADE,
    tag_id int4 NOT NULL REFERENCES tags (id),
    PRIMARY KEY (recipe_id, tag_id)
);

CREATE TABLE customers (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL UNIQUE,
    name text NOT NULL,
    diet diet NOT NULL DEFAULT 'omnivore',
    dislikes int4[] NOT NULL DEFAULT '{}',
    marketing_opt_in bool NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);

CREATE UNIQUE INDEX customers_email_live ON customers (lower(email)) WHERE deleted_at IS NULL;

CREATE TABLE addresses (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id int8 NOT NULL REFERENCES customers (id),
    line1 text NOT NULL,
    line2 text,
    city text NOT NULL,
    postcode postcode NOT NULL,
    is_default bool NOT NULL DEFAULT false,
    instructions text
);

CREATE UNIQUE INDEX addresses_one_default ON addresses (customer_id) WHERE is_default;

CREATE TABLE subscriptions (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id int8 NOT NULL REFERENCES customers (id),
    address_id int8 NOT NULL REFERENCES addresses (id),
    recipes_per_week int2 NOT NULL CHECK (recipes_per_week BETWEEN 2 AND 5),
    people int2 NOT NULL DEFAULT 2,
    slot delivery_slot NOT NULL DEFAULT 'evening',
    weekly_price cents NOT NULL,
    started_on date NOT NULL DEFAULT current_date,
    paused_until date,
    cancelled_on date
);

CREATE TABLE boxes (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    week date NOT NULL UNIQUE,
    theme text,
    locked bool NOT NULL DEFAULT false
);

CREATE TABLE box_recipes (
    box_id int4 NOT NULL REFERENCES boxes (id),
    recipe_id int4 NOT NULL REFERENCES recipes (id),
    featured bool NOT NULL DEFAULT false,
    PRIMARY KEY (box_id, recipe_id)
);

CREATE TABLE orders (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id int8 NOT NULL REFERENCES customers (id),
    subscription_id int8 REFERENCES subscriptions (id),
    box_id int4 REFERENCES boxes (id),
    state order_state NOT NULL DEFAULT 'basket',
    subtotal cents NOT NULL DEFAULT 0,
    discount cents NOT NULL DEFAULT 0,
    placed_at timestamptz,
    meta jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX orders_open ON orders (customer_id) WHERE state IN ('basket', 'placed');

CREATE TABLE order_items (
    order_id int8 NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    recipe_id int4 NOT NULL REFERENCES recipes (id),
    portions int2 NOT NULL,
    unit_price cents NOT NULL,
    PRIMARY KEY (order_id, recipe_id)
);

CREATE TABLE couriers (
    id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    vehicle text,
    zones text[] NOT NULL DEFAULT '{}'
);

CREATE TABLE deliveries (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id int8 NOT NULL UNIQUE REFERENCES orders (id),
    courier_id int4 REFERENCES couriers (id),
    address_id int8 NOT NULL REFERENCES addresses (id),
    slot delivery_slot NOT NULL,
    time_window tstzrange NOT NULL,
    delivered_at timestamptz,
    proof jsonb
);

CREATE TABLE reviews (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id int8 NOT NULL REFERENCES customers (id),
    recipe_id int4 NOT NULL REFERENCES recipes (id),
    stars stars NOT NULL,
    body text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (customer_id, recipe_id)
);

CREATE TABLE inventory_movements (
    id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ingredient_id int4 NOT NULL REFERENCES ingredients (id),
    delta numeric(12, 2) NOT NULL,
    reason text NOT NULL,
    order_id int8 REFERENCES orders (id),
    at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE promo_codes (
    code text PRIMARY KEY,
    percent_off int2,
    amount_off cents,
    valid_during daterange NOT NULL,
    max_uses int4,
    CHECK (percent_off IS NOT NULL OR amount_off IS NOT NULL)
);

CREATE TABLE promo_redemptions (
    code text NOT NULL REFERENCES promo_codes (code),
    order_id int8 NOT NULL REFERENCES orders (id),
    redeemed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (code, order_id)
);

CREATE VIEW published_recipes AS
SELECT r.id, r.slug, r.title, r.diet, r.minutes, (r.per_serving).kcal AS kcal
FROM recipes r
WHERE r.published_at IS NOT NULL AND r.published_at <= now();

CREATE VIEW customer_value AS
SELECT c.id AS customer_id, c.name, count(o.id) AS orders, sum(o.subtotal - o.discount) AS spent,
       max(o.placed_at) AS last_order
FROM customers c
LEFT JOIN orders o ON o.customer_id = c.id AND o.state IN ('placed', 'packed', 'shipped', 'delivered')
GROUP BY c.id;

CREATE FUNCTION ingredient_price(ingredient int4, on_day date DEFAULT current_date) RETURNS numeric
    LANGUAGE sql STABLE STRICT
    AS $$
        SELECT price_per_unit FROM ingredient_prices
        WHERE ingredient_id = ingredient AND valid_from <= on_day
        ORDER BY valid_from DESC LIMIT 1
    $$;

CREATE FUNCTION recipe_cost(recipe int4) RETURNS numeric
    LANGUAGE sql STABLE STRICT
    AS $$
        SELECT coalesce(sum(ri.quantity * ingredient_price(ri.ingredient_id)), 0)
        FROM recipe_ingredients ri WHERE ri.recipe_id = recipe AND NOT ri.optional
    $$;

CREATE FUNCTION recipes_for(wanted diet, max_minutes int4 DEFAULT 60)
    RETURNS TABLE (recipe_id int4, title text, minutes int4, kcal int4)
    LANGUAGE sql STABLE
    AS $$
        SELECT id, title, minutes, (per_serving).kcal FROM recipes
        WHERE published_at IS NOT NULL AND minutes <= max_minutes
          AND (wanted = 'omnivore' OR diet = wanted OR diet = 'vegan')
    $$;

CREATE FUNCTION next_monday(from_day date) RETURNS date
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT from_day + ((8 - extract(isodow FROM from_day)::int4) % 7) $$;

CREATE FUNCTION stock_level(ingredient int4) RETURNS numeric
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(sum(delta), 0) FROM inventory_movements WHERE ingredient_id = ingredient $$;

CREATE FUNCTION allergen_list() RETURNS SETOF text
    LANGUAGE sql STABLE
    AS $$ SELECT DISTINCT unnest(allergens) FROM ingredients ORDER BY 1 $$;

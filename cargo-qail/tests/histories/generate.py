#!/usr/bin/env python3
"""Writes the migration histories the fidelity test imports offline and applies to a server.

Three projects in the manner of real ones, each in one of sqlx's layouts:
  shop/       <timestamp>_<name>.sql           an online shop (enums grown, views replaced,
                                                DO blocks, a partitioned event log)
  saas/       <timestamp>_<name>.up/.down.sql  a multi-tenant service (a second schema,
                                                search_path, plpgsql, identity, materialized
                                                views, CREATE INDEX CONCURRENTLY)
  telemetry/  <NNNN>_<name>.sql                device telemetry (range, list and hash
                                                partitions, domains, composite and range types,
                                                column type changes, views on views)

Run from this directory: `python3 generate.py`. The files are committed; the script is how
they were made and how to make more.
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def write(project, files, reversible=False, numbered=False):
    d = os.path.join(HERE, project, "migrations")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for i, (name, up, *down) in enumerate(files, start=1):
        version = f"{i:04d}" if numbered else f"2023{(i // 28) + 1:02d}{(i % 28) + 1:02d}120000"
        if reversible:
            with open(os.path.join(d, f"{version}_{name}.up.sql"), "w") as f:
                f.write(up.strip() + "\n")
            with open(os.path.join(d, f"{version}_{name}.down.sql"), "w") as f:
                f.write((down[0] if down else "SELECT 1;").strip() + "\n")
        else:
            with open(os.path.join(d, f"{version}_{name}.sql"), "w") as f:
                f.write(up.strip() + "\n")
    return len(files)


def shop():
    m = []
    m.append(("create_users", """
CREATE TABLE users (
    id bigserial PRIMARY KEY,
    email varchar(255) NOT NULL,
    name text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_idx ON users (email);
"""))
    m.append(("create_products", """
CREATE TABLE products (
    id serial PRIMARY KEY,
    sku text NOT NULL UNIQUE,
    title text NOT NULL,
    price_cents integer NOT NULL CHECK (price_cents >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);
"""))
    m.append(("order_status", "CREATE TYPE order_status AS ENUM ('pending', 'paid', 'shipped');"))
    m.append(("create_orders", """
CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    status order_status NOT NULL DEFAULT 'pending',
    total_cents integer NOT NULL DEFAULT 0,
    placed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX orders_user_id_idx ON orders (user_id);
"""))
    m.append(("create_order_items", """
CREATE TABLE order_items (
    order_id bigint NOT NULL,
    product_id integer NOT NULL,
    quantity integer NOT NULL DEFAULT 1,
    unit_price_cents integer NOT NULL,
    PRIMARY KEY (order_id, product_id)
);
DO $$ BEGIN
 ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_fk" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE cascade;
EXCEPTION
 WHEN duplicate_object THEN null;
END $$;
DO $$ BEGIN
 ALTER TABLE "order_items" ADD CONSTRAINT "order_items_product_id_fk" FOREIGN KEY ("product_id") REFERENCES "products"("id");
EXCEPTION
 WHEN duplicate_object THEN null;
END $$;
"""))
    m.append(("order_totals_view", """
CREATE VIEW order_totals AS
SELECT o.id, o.user_id, sum(i.quantity * i.unit_price_cents) AS total
FROM orders o JOIN order_items i ON i.order_id = o.id
GROUP BY o.id, o.user_id;
"""))
    m.append(("email_domain", """
CREATE DOMAIN email_address AS text CHECK (VALUE ~ '^[^@]+@[^@]+$');
"""))
    m.append(("invoice_numbers", """
CREATE SEQUENCE invoice_number_seq START 1000;
CREATE TABLE invoices (
    id bigserial PRIMARY KEY,
    order_id bigint NOT NULL REFERENCES orders (id),
    number bigint NOT NULL DEFAULT nextval('invoice_number_seq'),
    issued_at timestamptz NOT NULL DEFAULT now()
);
"""))
    m.append(("status_refunded", "ALTER TYPE order_status ADD VALUE 'refunded';"))
    m.append(("status_cancelled", "ALTER TYPE order_status ADD VALUE IF NOT EXISTS 'cancelled' BEFORE 'paid';"))
    # Tables grow column by column, the way features land.
    growth = [
        ("users", "phone", "text"),
        ("users", "locale", "varchar(10) NOT NULL DEFAULT 'en'"),
        ("products", "description", "text"),
        ("products", "stock", "integer NOT NULL DEFAULT 0"),
        ("orders", "shipping_address", "jsonb"),
        ("orders", "notes", "text"),
        ("users", "last_login_at", "timestamptz"),
        ("products", "weight_grams", "integer"),
        ("order_items", "discount_cents", "integer NOT NULL DEFAULT 0"),
        ("users", "marketing_opt_in", "boolean NOT NULL DEFAULT false"),
        ("products", "tags", "text[] NOT NULL DEFAULT '{}'"),
        ("orders", "currency", "char(3) NOT NULL DEFAULT 'EUR'"),
    ]
    for t, c, ty in growth:
        m.append((f"add_{t}_{c}", f"ALTER TABLE {t} ADD COLUMN {c} {ty};"))
    m.append(("index_products_title", "CREATE INDEX products_title_idx ON products (lower(title));"))
    m.append(("rename_users_name", "ALTER TABLE users RENAME COLUMN name TO display_name;"))
    m.append(("user_email_domain", """
ALTER TABLE users ADD COLUMN contact_email email_address;
UPDATE users SET contact_email = email;
"""))
    m.append(("replace_order_totals", """
CREATE OR REPLACE VIEW order_totals AS
SELECT o.id, o.user_id, sum(i.quantity * i.unit_price_cents) AS total,
       sum(i.discount_cents) AS discount
FROM orders o JOIN order_items i ON i.order_id = o.id
GROUP BY o.id, o.user_id;
"""))
    m.append(("order_total_function", """
CREATE FUNCTION order_total(p_order bigint) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(sum(quantity * unit_price_cents), 0) FROM order_items WHERE order_id = p_order $$;
"""))
    m.append(("order_total_function_cost", """
CREATE OR REPLACE FUNCTION order_total(p_order bigint) RETURNS bigint
    AS $$ SELECT coalesce(sum(quantity * unit_price_cents - discount_cents), 0) FROM order_items WHERE order_id = p_order $$
    LANGUAGE sql STABLE COST 50;
"""))
    m.append(("create_events", """
CREATE TABLE events (
    id bigint GENERATED ALWAYS AS IDENTITY,
    happened_at timestamptz NOT NULL,
    kind text NOT NULL,
    payload jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (id, happened_at)
) PARTITION BY RANGE (happened_at);
"""))
    for y in (2022, 2023, 2024):
        m.append((f"events_{y}", f"CREATE TABLE events_{y} PARTITION OF events FOR VALUES FROM ('{y}-01-01') TO ('{y + 1}-01-01');"))
    m.append(("events_kind_index", "CREATE INDEX events_kind_idx ON events (kind);"))
    m.append(("create_reviews", """
CREATE TABLE reviews (
    id serial PRIMARY KEY,
    product_id integer NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    user_id bigint REFERENCES users (id) ON DELETE SET NULL,
    rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body text
);
"""))
    m.append(("product_ratings_view", """
CREATE VIEW product_ratings AS
SELECT p.id AS product_id, p.title, avg(r.rating) AS average, count(r.id) AS reviews
FROM products p LEFT JOIN reviews r ON r.product_id = p.id
GROUP BY p.id, p.title;
"""))
    m.append(("rename_reviews", """
ALTER TABLE reviews RENAME TO product_reviews;
ALTER TABLE product_reviews RENAME COLUMN body TO comment;
"""))
    m.append(("carts", """
CREATE TABLE carts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id bigint REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE cart_items (
    cart_id uuid NOT NULL REFERENCES carts (id) ON DELETE CASCADE,
    product_id integer NOT NULL REFERENCES products (id),
    quantity integer NOT NULL DEFAULT 1,
    UNIQUE (cart_id, product_id)
);
"""))
    m.append(("drop_users_phone", "ALTER TABLE users DROP COLUMN phone;"))
    m.append(("status_view", """
DROP VIEW order_totals;
CREATE VIEW order_totals AS
SELECT o.id, o.user_id, o.status, o.currency,
       sum(i.quantity * i.unit_price_cents) AS total
FROM orders o JOIN order_items i ON i.order_id = o.id
GROUP BY o.id;
"""))
    m.append(("coupons", """
CREATE TYPE discount_kind AS ENUM ('percent', 'fixed');
CREATE TABLE coupons (
    code text PRIMARY KEY,
    kind discount_kind NOT NULL,
    amount numeric(10, 2) NOT NULL,
    valid_until date
);
ALTER TABLE orders ADD COLUMN coupon_code text REFERENCES coupons (code);
"""))
    m.append(("orders_status_index", "CREATE INDEX orders_status_idx ON orders (status) WHERE status <> 'shipped';"))
    m.append(("price_to_bigint", "ALTER TABLE products ALTER COLUMN price_cents TYPE bigint;"))
    m.append(("users_not_null_name", """
UPDATE users SET display_name = email WHERE display_name IS NULL;
ALTER TABLE users ALTER COLUMN display_name SET NOT NULL;
"""))
    m.append(("search_function", """
CREATE FUNCTION search_products(q text, max_rows integer DEFAULT 20)
RETURNS TABLE (id integer, title text, price_cents bigint)
LANGUAGE sql STABLE AS $$
    SELECT id, title, price_cents FROM products WHERE title ILIKE '%' || q || '%' LIMIT max_rows
$$;
"""))
    m.append(("user_stats_function", """
CREATE FUNCTION user_stats(p_user bigint, OUT orders bigint, OUT spent bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT count(*), coalesce(sum(total_cents), 0) INTO orders, spent FROM orders WHERE user_id = p_user;
END
$$;
"""))
    m.append(("wishlists", """
CREATE TABLE wishlists (
    user_id bigint NOT NULL REFERENCES users (id),
    product_id integer NOT NULL REFERENCES products (id),
    added_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, product_id)
);
COMMENT ON TABLE wishlists IS 'products a user saved for later';
"""))
    m.append(("status_returned", "ALTER TYPE order_status ADD VALUE 'returned' AFTER 'shipped';"))
    m.append(("drop_carts_created", "ALTER TABLE carts DROP COLUMN created_at, ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();"))
    m.append(("events_2025", "CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');"))
    m.append(("events_default", "CREATE TABLE events_default PARTITION OF events DEFAULT;"))
    m.append(("drop_events_2022", "DROP TABLE events_2022;"))
    m.append(("product_slug", """
ALTER TABLE products ADD COLUMN slug text;
UPDATE products SET slug = lower(replace(title, ' ', '-'));
ALTER TABLE products ALTER COLUMN slug SET NOT NULL;
ALTER TABLE products ADD CONSTRAINT products_slug_key UNIQUE (slug);
"""))
    m.append(("ratings_materialized", """
DROP VIEW product_ratings;
CREATE MATERIALIZED VIEW product_ratings AS
SELECT p.id AS product_id, avg(r.rating)::numeric(3, 2) AS average, count(r.id) AS reviews
FROM products p LEFT JOIN product_reviews r ON r.product_id = p.id
GROUP BY p.id;
CREATE UNIQUE INDEX product_ratings_product_id_idx ON product_ratings (product_id);
"""))
    m.append(("rename_invoices_number", "ALTER TABLE invoices RENAME COLUMN number TO invoice_no;"))
    m.append(("drop_wishlists_added", "ALTER TABLE wishlists ALTER COLUMN added_at DROP DEFAULT;"))
    m.append(("settings", """
DO $$
BEGIN
    CREATE TABLE settings (key text PRIMARY KEY, value jsonb NOT NULL);
    CREATE INDEX settings_value_idx ON settings USING gin (value);
END
$$;
"""))
    m.append(("grants", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO PUBLIC;"))
    m.append(("drop_coupon_valid_until", "ALTER TABLE coupons DROP COLUMN valid_until;"))
    m.append(("orders_paid_at", "ALTER TABLE orders ADD COLUMN paid_at timestamptz, ADD COLUMN refunded_at timestamptz;"))
    m.append(("drop_search_function", "DROP FUNCTION search_products(text, integer);"))
    m.append(("search_function_v2", """
CREATE FUNCTION search_products(q text) RETURNS SETOF products
LANGUAGE sql STABLE AS $$ SELECT * FROM products WHERE title ILIKE '%' || q || '%' $$;
"""))
    return write("shop", m)


def saas():
    m = []
    m.append(("extensions_and_schema", """
CREATE SCHEMA billing;
""", "DROP SCHEMA billing;"))
    m.append(("orgs", """
CREATE TABLE orgs (
    id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    name text NOT NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
);
""", "DROP TABLE orgs;"))
    m.append(("member_role", "CREATE TYPE member_role AS ENUM ('owner', 'member');", "DROP TYPE member_role;"))
    m.append(("accounts", """
CREATE TABLE accounts (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE UNIQUE INDEX accounts_email_lower_idx ON accounts (lower(email));
""", "DROP TABLE accounts;"))
    m.append(("memberships", """
CREATE TABLE memberships (
    org_id integer NOT NULL REFERENCES orgs ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES accounts ON DELETE CASCADE,
    role member_role NOT NULL DEFAULT 'member',
    PRIMARY KEY (org_id, account_id)
);
""", "DROP TABLE memberships;"))
    m.append(("role_admin", "ALTER TYPE member_role ADD VALUE 'admin' BEFORE 'member';"))
    m.append(("billing_plans", """
SET search_path TO billing, public;
CREATE TABLE plans (
    id smallserial PRIMARY KEY,
    code text NOT NULL UNIQUE,
    monthly_cents integer NOT NULL,
    seats integer
);
RESET search_path;
""", "DROP TABLE billing.plans;"))
    m.append(("billing_subscriptions", """
CREATE TYPE billing.subscription_state AS ENUM ('trialing', 'active', 'past_due', 'canceled');
CREATE TABLE billing.subscriptions (
    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    org_id integer NOT NULL REFERENCES public.orgs (id),
    plan_id smallint NOT NULL REFERENCES billing.plans (id),
    state billing.subscription_state NOT NULL DEFAULT 'trialing',
    started_at timestamptz NOT NULL DEFAULT now(),
    ends_at timestamptz
);
""", "DROP TABLE billing.subscriptions; DROP TYPE billing.subscription_state;"))
    m.append(("projects", """
CREATE TABLE projects (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id integer NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name text NOT NULL,
    archived boolean NOT NULL DEFAULT false,
    UNIQUE (org_id, name)
);
""", "DROP TABLE projects;"))
    m.append(("projects_index", """
-- qail:no-transaction
CREATE INDEX CONCURRENTLY projects_org_id_idx ON projects (org_id);
""", "DROP INDEX projects_org_id_idx;"))
    m.append(("api_keys", """
CREATE TABLE api_keys (
    id serial PRIMARY KEY,
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    prefix char(8) NOT NULL,
    hash bytea NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_prefix_key ON api_keys (prefix);
""", "DROP TABLE api_keys;"))
    cols = [
        ("orgs", "billing_email", "text"),
        ("orgs", "country", "char(2)"),
        ("accounts", "full_name", "text"),
        ("accounts", "avatar_url", "text"),
        ("accounts", "verified_at", "timestamptz"),
        ("projects", "description", "text"),
        ("projects", "settings", "jsonb NOT NULL DEFAULT '{}'::jsonb"),
        ("memberships", "invited_by", "integer REFERENCES accounts (id)"),
        ("memberships", "joined_at", "timestamptz NOT NULL DEFAULT now()"),
        ("api_keys", "scopes", "text[] NOT NULL DEFAULT ARRAY['read']"),
        ("orgs", "seat_limit", "integer CHECK (seat_limit > 0)"),
        ("accounts", "mfa_enabled", "boolean NOT NULL DEFAULT false"),
    ]
    for t, c, ty in cols:
        m.append((f"add_{t}_{c}", f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS {c} {ty};", f"ALTER TABLE {t} DROP COLUMN {c};"))
    m.append(("timestamps_tz", """
ALTER TABLE orgs ALTER COLUMN created_at TYPE timestamptz;
ALTER TABLE accounts ALTER COLUMN created_at TYPE timestamptz USING created_at AT TIME ZONE 'UTC';
""", "SELECT 1;"))
    m.append(("member_view", """
CREATE VIEW org_members AS
SELECT m.org_id, a.id AS account_id, a.email, a.full_name, m.role
FROM memberships m JOIN accounts a ON a.id = m.account_id;
""", "DROP VIEW org_members;"))
    m.append(("seat_count_function", """
CREATE OR REPLACE FUNCTION seat_count(p_org integer) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE n integer;
BEGIN
    SELECT count(*) INTO n FROM memberships WHERE org_id = p_org;
    RETURN n;
END
$$;
""", "DROP FUNCTION seat_count(integer);"))
    m.append(("audit_log", """
CREATE TABLE audit_log (
    id bigserial PRIMARY KEY,
    org_id integer REFERENCES orgs (id) ON DELETE SET NULL,
    actor_id integer REFERENCES accounts (id) ON DELETE SET NULL,
    action text NOT NULL,
    detail jsonb,
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_org_at_idx ON audit_log (org_id, at DESC);
""", "DROP TABLE audit_log;"))
    m.append(("rename_accounts", """
ALTER TABLE accounts RENAME TO users;
ALTER TABLE users RENAME COLUMN full_name TO display_name;
""", "ALTER TABLE users RENAME COLUMN display_name TO full_name; ALTER TABLE users RENAME TO accounts;"))
    m.append(("member_view_v2", """
CREATE OR REPLACE VIEW org_members AS
SELECT m.org_id, u.id AS account_id, u.email, u.display_name AS full_name, m.role, m.joined_at
FROM memberships m JOIN users u ON u.id = m.account_id;
""", "SELECT 1;"))
    m.append(("usage", """
CREATE TABLE billing.usage (
    subscription_id bigint NOT NULL REFERENCES billing.subscriptions (id),
    day date NOT NULL,
    requests bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (subscription_id, day)
) PARTITION BY RANGE (day);
""", "DROP TABLE billing.usage;"))
    for q in range(1, 5):
        m.append((f"usage_2024_q{q}", f"CREATE TABLE billing.usage_2024_q{q} PARTITION OF billing.usage FOR VALUES FROM ('2024-{3 * q - 2:02d}-01') TO ('{2024 if q < 4 else 2025}-{(3 * q + 1) if q < 4 else 1:02d}-01');", f"DROP TABLE billing.usage_2024_q{q};"))
    m.append(("usage_summary", """
CREATE MATERIALIZED VIEW billing.monthly_usage AS
SELECT subscription_id, date_trunc('month', day) AS month, sum(requests) AS requests
FROM billing.usage GROUP BY 1, 2;
""", "DROP MATERIALIZED VIEW billing.monthly_usage;"))
    m.append(("state_paused", "ALTER TYPE billing.subscription_state ADD VALUE 'paused';", "SELECT 1;"))
    m.append(("invites", """
CREATE TABLE invites (
    token text PRIMARY KEY,
    org_id integer NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    email text NOT NULL,
    role member_role NOT NULL DEFAULT 'member',
    expires_at timestamptz NOT NULL
);
""", "DROP TABLE invites;"))
    m.append(("invites_fk_guard", """
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'invites_email_check') THEN
    ALTER TABLE invites ADD CONSTRAINT invites_email_check CHECK (email LIKE '%@%');
  END IF;
END $$;
""", "SELECT 1;"))
    m.append(("drop_api_keys_revoked", "ALTER TABLE api_keys DROP COLUMN revoked_at;", "ALTER TABLE api_keys ADD COLUMN revoked_at timestamptz;"))
    m.append(("plan_features", """
CREATE TABLE billing.plan_features (
    plan_id smallint NOT NULL REFERENCES billing.plans (id) ON DELETE CASCADE,
    feature text NOT NULL,
    PRIMARY KEY (plan_id, feature)
);
""", "DROP TABLE billing.plan_features;"))
    m.append(("active_subscriptions", """
CREATE FUNCTION billing.active_subscriptions(p_org integer)
RETURNS TABLE (subscription_id bigint, plan_code text, started_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT s.id, p.code, s.started_at FROM billing.subscriptions s JOIN billing.plans p ON p.id = s.plan_id
    WHERE s.org_id = p_org AND s.state = 'active'
$$;
""", "DROP FUNCTION billing.active_subscriptions(integer);"))
    m.append(("projects_archived_at", """
ALTER TABLE projects ADD COLUMN archived_at timestamptz;
UPDATE projects SET archived_at = now() WHERE archived;
ALTER TABLE projects DROP COLUMN archived;
""", "SELECT 1;"))
    m.append(("orgs_name_length", "ALTER TABLE orgs ALTER COLUMN name TYPE varchar(120);", "ALTER TABLE orgs ALTER COLUMN name TYPE text;"))
    m.append(("drop_seat_count", "DROP FUNCTION IF EXISTS seat_count(integer);", "SELECT 1;"))
    m.append(("seat_count_v2", """
CREATE FUNCTION seat_count(p_org integer, OUT used integer, OUT seat_limit integer)
LANGUAGE sql STABLE AS $$
    SELECT (SELECT count(*)::int FROM memberships WHERE org_id = p_org), o.seat_limit FROM orgs o WHERE o.id = p_org
$$;
""", "DROP FUNCTION seat_count(integer);"))
    m.append(("webhooks", """
CREATE TABLE webhooks (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    url text NOT NULL,
    secret text NOT NULL,
    events text[] NOT NULL
);
""", "DROP TABLE webhooks;"))
    m.append(("webhooks_identity_default", "ALTER TABLE webhooks ALTER COLUMN id SET GENERATED BY DEFAULT;", "SELECT 1;"))
    m.append(("webhook_deliveries", """
CREATE TABLE webhook_deliveries (
    id bigserial PRIMARY KEY,
    webhook_id integer NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    status_code smallint,
    attempted_at timestamptz NOT NULL DEFAULT now()
);
""", "DROP TABLE webhook_deliveries;"))
    m.append(("deliveries_index", """
-- qail:no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, attempted_at);
""", "DROP INDEX webhook_deliveries_webhook_idx;"))
    m.append(("users_locale", "ALTER TABLE users ADD COLUMN locale text NOT NULL DEFAULT 'en-US';", "ALTER TABLE users DROP COLUMN locale;"))
    m.append(("audit_view", """
CREATE VIEW recent_audit AS
SELECT a.id, a.org_id, u.email AS actor, a.action, a.at
FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id
WHERE a.at > now() - interval '30 days';
""", "DROP VIEW recent_audit;"))
    m.append(("drop_orgs_country", "ALTER TABLE orgs DROP COLUMN IF EXISTS country;", "SELECT 1;"))
    m.append(("rename_constraint", "ALTER TABLE api_keys RENAME CONSTRAINT api_keys_project_id_fkey TO api_keys_project_fk;", "SELECT 1;"))
    return write("saas", m, reversible=True)


def telemetry():
    m = []
    m.append(("init", """
CREATE DOMAIN positive_int AS integer CHECK (VALUE > 0);
CREATE DOMAIN device_serial AS text NOT NULL CHECK (length(VALUE) BETWEEN 6 AND 32);
CREATE TYPE geo_point AS (lat double precision, lon double precision);
CREATE TYPE reading_kind AS ENUM ('temperature', 'humidity');
"""))
    m.append(("sites", """
CREATE TABLE sites (
    id serial PRIMARY KEY,
    name text NOT NULL,
    location geo_point,
    timezone text NOT NULL DEFAULT 'UTC'
);
"""))
    m.append(("devices", """
CREATE TABLE devices (
    id bigserial PRIMARY KEY,
    serial device_serial UNIQUE,
    site_id integer REFERENCES sites (id),
    firmware text,
    installed_at timestamptz NOT NULL DEFAULT now()
);
"""))
    m.append(("readings", """
CREATE TABLE readings (
    device_id bigint NOT NULL REFERENCES devices (id),
    at timestamptz NOT NULL,
    kind reading_kind NOT NULL,
    value double precision NOT NULL,
    PRIMARY KEY (device_id, at, kind)
) PARTITION BY RANGE (at);
"""))
    for month in range(1, 13):
        nxt = f"2024-{month + 1:02d}-01" if month < 12 else "2025-01-01"
        m.append((f"readings_2024_{month:02d}", f"CREATE TABLE readings_2024_{month:02d} PARTITION OF readings FOR VALUES FROM ('2024-{month:02d}-01') TO ('{nxt}');"))
    m.append(("kinds_more", """
ALTER TYPE reading_kind ADD VALUE 'pressure';
ALTER TYPE reading_kind ADD VALUE 'co2' AFTER 'humidity';
"""))
    m.append(("alerts", """
CREATE TYPE severity AS ENUM ('info', 'warning', 'critical');
CREATE TABLE alerts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    device_id bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    severity severity NOT NULL,
    message text NOT NULL,
    raised_at timestamptz NOT NULL DEFAULT now(),
    cleared_at timestamptz
);
CREATE INDEX alerts_open_idx ON alerts (device_id) WHERE cleared_at IS NULL;
"""))
    m.append(("device_status_view", """
CREATE VIEW device_status AS
SELECT d.id, d.serial, s.name AS site, count(a.id) FILTER (WHERE a.cleared_at IS NULL) AS open_alerts
FROM devices d LEFT JOIN sites s ON s.id = d.site_id LEFT JOIN alerts a ON a.device_id = d.id
GROUP BY d.id, s.name;
"""))
    m.append(("critical_devices_view", """
CREATE VIEW critical_devices AS
SELECT ds.id, ds.serial, ds.site FROM device_status ds WHERE ds.open_alerts > 0;
"""))
    m.append(("firmware_versions", """
CREATE TABLE firmware_versions (
    version text PRIMARY KEY,
    released_at date NOT NULL,
    notes text
);
ALTER TABLE devices ADD CONSTRAINT devices_firmware_fkey FOREIGN KEY (firmware) REFERENCES firmware_versions (version) NOT VALID;
ALTER TABLE devices VALIDATE CONSTRAINT devices_firmware_fkey;
"""))
    m.append(("calibration", """
CREATE TYPE calibration_window AS RANGE (subtype = timestamptz);
CREATE TABLE calibrations (
    device_id bigint NOT NULL REFERENCES devices (id),
    valid calibration_window NOT NULL,
    offset_value double precision NOT NULL DEFAULT 0
);
"""))
    m.append(("device_tags", """
CREATE TABLE device_tags (
    device_id bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    tag text NOT NULL
) PARTITION BY HASH (device_id);
CREATE TABLE device_tags_0 PARTITION OF device_tags FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE device_tags_1 PARTITION OF device_tags FOR VALUES WITH (MODULUS 2, REMAINDER 1);
"""))
    m.append(("sites_region", """
CREATE TABLE site_groups (code text NOT NULL, region text NOT NULL, PRIMARY KEY (code, region)) PARTITION BY LIST (region);
CREATE TABLE site_groups_eu PARTITION OF site_groups FOR VALUES IN ('eu');
CREATE TABLE site_groups_us PARTITION OF site_groups FOR VALUES IN ('us', 'ca');
ALTER TABLE sites ADD COLUMN group_code text;
"""))
    steps = [
        "ALTER TABLE devices ADD COLUMN battery_pct smallint CHECK (battery_pct BETWEEN 0 AND 100);",
        "ALTER TABLE devices ADD COLUMN last_seen_at timestamptz;",
        "ALTER TABLE sites ADD COLUMN altitude_m positive_int;",
        "ALTER TABLE alerts ADD COLUMN acknowledged_by text;",
        "ALTER TABLE devices RENAME COLUMN firmware TO firmware_version;",
        "ALTER TABLE sites ALTER COLUMN timezone SET DEFAULT 'Europe/Berlin';",
        "ALTER TABLE calibrations ADD COLUMN id serial PRIMARY KEY;",
        "ALTER TABLE devices ALTER COLUMN battery_pct TYPE integer;",
        "ALTER TABLE alerts ADD COLUMN duration interval GENERATED ALWAYS AS (cleared_at - raised_at) STORED;",
        "ALTER TABLE sites ADD COLUMN contact jsonb, ADD COLUMN notes text;",
        "ALTER TABLE sites DROP COLUMN notes;",
        "ALTER TABLE devices ADD COLUMN model varchar(64) NOT NULL DEFAULT 'generic';",
        "ALTER TABLE alerts ALTER COLUMN message DROP NOT NULL;",
        "ALTER TABLE firmware_versions ADD COLUMN checksum bytea;",
        "CREATE INDEX devices_last_seen_idx ON devices (last_seen_at DESC NULLS LAST);",
        "ALTER TABLE alerts RENAME TO device_alerts;",
    ]
    for i, s in enumerate(steps, start=1):
        m.append((f"evolve_{i:02d}", s))
    m.append(("device_status_v2", """
DROP VIEW critical_devices;
CREATE OR REPLACE VIEW device_status AS
SELECT d.id, d.serial, s.name AS site, count(a.id) FILTER (WHERE a.cleared_at IS NULL) AS open_alerts,
       d.battery_pct, d.last_seen_at
FROM devices d LEFT JOIN sites s ON s.id = d.site_id LEFT JOIN device_alerts a ON a.device_id = d.id
GROUP BY d.id, s.name;
CREATE VIEW critical_devices AS
SELECT id, serial, site, battery_pct FROM device_status WHERE open_alerts > 0 OR battery_pct < 10;
"""))
    m.append(("latest_reading_function", """
CREATE FUNCTION latest_reading(p_device bigint, p_kind reading_kind)
RETURNS double precision
LANGUAGE sql STABLE STRICT AS $$
    SELECT value FROM readings WHERE device_id = p_device AND kind = p_kind ORDER BY at DESC LIMIT 1
$$;
"""))
    m.append(("latest_reading_cost", """
CREATE OR REPLACE FUNCTION latest_reading(p_device bigint, p_kind reading_kind)
RETURNS double precision
AS $$
    SELECT value FROM readings WHERE device_id = p_device AND kind = p_kind ORDER BY at DESC LIMIT 1
$$ LANGUAGE sql STABLE STRICT COST 20;
"""))
    m.append(("daily_function", """
CREATE FUNCTION daily_average(p_device bigint, p_kind reading_kind)
RETURNS TABLE (day date, average double precision, samples bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY SELECT at::date, avg(value), count(*) FROM readings
        WHERE device_id = p_device AND kind = p_kind GROUP BY 1 ORDER BY 1;
END
$$;
"""))
    m.append(("readings_2025", """
DO $$
BEGIN
    CREATE TABLE readings_2025 PARTITION OF readings FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
END $$;
"""))
    m.append(("drop_device_tags_1", "ALTER TABLE device_tags DETACH PARTITION device_tags_1;"))
    m.append(("daily_matview", """
CREATE MATERIALIZED VIEW site_daily AS
SELECT s.id AS site_id, r.at::date AS day, r.kind, avg(r.value) AS average
FROM readings r JOIN devices d ON d.id = r.device_id JOIN sites s ON s.id = d.site_id
GROUP BY 1, 2, 3
WITH NO DATA;
"""))
    m.append(("rename_sites", """
ALTER TABLE sites RENAME TO locations;
ALTER TABLE devices RENAME COLUMN site_id TO location_id;
"""))
    m.append(("maintenance", """
CREATE TABLE maintenance (
    id bigserial PRIMARY KEY,
    device_id bigint NOT NULL REFERENCES devices (id),
    performed_at timestamptz NOT NULL DEFAULT now(),
    technician text NOT NULL,
    cost_cents integer
);
ALTER TABLE maintenance ADD CONSTRAINT maintenance_cost_check CHECK (cost_cents >= 0) NOT VALID;
"""))
    m.append(("serial_to_identity_device_tags", "ALTER TABLE firmware_versions ADD COLUMN seq integer GENERATED BY DEFAULT AS IDENTITY;"))
    m.append(("drop_calibration_id", "ALTER TABLE calibrations DROP COLUMN id;"))
    return write("telemetry", m, numbered=True)


if __name__ == "__main__":
    for f in (shop, saas, telemetry):
        print(f.__name__, f(), "migrations")

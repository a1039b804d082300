-- Function signatures: defaults, RETURNS TABLE / SETOF, OUT parameters, STRICT, volatility.
CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL);

CREATE FUNCTION add(a integer, b integer DEFAULT 1) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT a + b $$;

CREATE FUNCTION add(a numeric, b numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE RETURNS NULL ON NULL INPUT AS $$ SELECT a + b $$;

CREATE FUNCTION item_ids() RETURNS SETOF int LANGUAGE sql STABLE AS $$ SELECT id FROM items $$;

CREATE FUNCTION item_rows(min_id int DEFAULT 0, max_id int DEFAULT 100)
    RETURNS TABLE (id int, name text) LANGUAGE sql STABLE
    AS $$ SELECT id, name FROM items WHERE id BETWEEN min_id AND max_id $$;

CREATE FUNCTION split_name(full_name text, OUT first text, OUT last text)
    LANGUAGE sql IMMUTABLE AS $$ SELECT split_part(full_name, ' ', 1), split_part(full_name, ' ', 2) $$;

CREATE FUNCTION touch() RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM 1; END $$;

CREATE FUNCTION whole_items() RETURNS SETOF items LANGUAGE sql AS $$ SELECT * FROM items $$;

CREATE OR REPLACE FUNCTION add(a integer, b integer DEFAULT 2) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT a + b $$;

CREATE FUNCTION now_utc() RETURNS timestamp LANGUAGE sql STABLE CALLED ON NULL INPUT
    AS $$ SELECT now() AT TIME ZONE 'utc' $$;

CREATE FUNCTION total(VARIADIC nums int[]) RETURNS bigint LANGUAGE sql IMMUTABLE
    AS $$ SELECT sum(n) FROM unnest(nums) AS n $$;

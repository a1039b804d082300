-- The differential fuzzer's schema: few rows, many NULLs, dangling references (so outer
-- joins null-extend), duplicate keys (so groups and joins multiply) and one empty table.
CREATE TABLE fa (
    id int4 PRIMARY KEY,
    n int4,
    t text,
    b bool,
    x numeric,
    k int4 NOT NULL,
    s text NOT NULL
);
CREATE TABLE fb (
    id int4 PRIMARY KEY,
    a_id int4,
    n int8,
    t text NOT NULL,
    f float8,
    d date
);
CREATE TABLE fc (
    id int4 PRIMARY KEY,
    b_id int4 NOT NULL,
    t text,
    j jsonb,
    arr int4[]
);
CREATE TABLE fe (
    id int4 PRIMARY KEY,
    v int4 NOT NULL,
    w text
);
-- Columns named by keywords, as applications name them.
CREATE TABLE fk (
    id int4 PRIMARY KEY,
    "interval" text,
    "value" int4 NOT NULL,
    "position" int4,
    "type" text NOT NULL,
    "year" int8,
    "level" numeric,
    "time" date
);
INSERT INTO fk VALUES
    (1, 'i', 1, NULL, 't', 2024, NULL, '2024-01-02'),
    (2, NULL, 2, 3, '', NULL, 1.5, NULL),
    (3, 'x', 3, 1, 'u', 2020, 2, '2020-05-06');

INSERT INTO fa VALUES
    (1, 10, 'a1', true, 1.5, 1, 'x'),
    (2, NULL, NULL, NULL, NULL, 2, 'y'),
    (3, 30, 'ab', false, NULL, 1, ''),
    (4, NULL, 'b', NULL, 4.25, 3, 'z');
INSERT INTO fb VALUES
    (1, 1, 100, 'p', 0.5, '2024-01-01'),
    (2, 1, NULL, 'q', NULL, NULL),
    (3, 9, 300, 'r', 2.5, '2024-03-01'),
    (4, NULL, NULL, '', NULL, '2024-04-01'),
    (5, 3, 500, 'a2', NULL, NULL);
INSERT INTO fc VALUES
    (1, 1, 'c1', '{"k": 1, "a": null}', '{1,2}'),
    (2, 7, NULL, NULL, NULL),
    (3, 5, 'c3', '{"a": "v"}', '{}'),
    (4, 2, 'c4', 'null', '{NULL,4}');

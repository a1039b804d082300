-- Column and table constraints, NULL/NOT NULL, CHECK (col IS NOT NULL), defaults.
CREATE TABLE harbors (
    id int PRIMARY KEY,
    name text NOT NULL UNIQUE,
    country char(2) NULL DEFAULT 'NO',
    depth numeric DEFAULT 12.5,
    opened date DEFAULT CURRENT_DATE,
    created timestamptz NOT NULL DEFAULT now(),
    code int DEFAULT -1,
    tags text[] DEFAULT '{}',
    note text CHECK (note IS NOT NULL),
    a int,
    b int,
    CONSTRAINT ab_present CHECK (a IS NOT NULL AND b IS NOT NULL),
    CHECK (depth > 0),
    UNIQUE (country, name)
);

CREATE TABLE pairs (
    x int,
    y int,
    label varchar(10) DEFAULT 'a' || 'b',
    PRIMARY KEY (x, y),
    UNIQUE (x, y)
);

CREATE TABLE pairs_bare (LIKE pairs);

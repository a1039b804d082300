-- Table inheritance: columns, NOT NULL, defaults and CHECK constraints are inherited; keys
-- are not.
CREATE TABLE vehicles (
    id int PRIMARY KEY,
    name text NOT NULL DEFAULT 'unnamed',
    wheels int,
    CHECK (wheels IS NOT NULL)
);

CREATE TABLE trucks (payload numeric, name text) INHERITS (vehicles);

CREATE TABLE boats (hull text NOT NULL);
CREATE TABLE amphibians (depth int) INHERITS (vehicles, boats);

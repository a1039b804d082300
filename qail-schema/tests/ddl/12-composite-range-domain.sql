-- Composite types, ranges, domains (NOT NULL, CHECK).
CREATE TYPE address AS (street text, nr int, zip varchar(10));
CREATE TYPE floatrange AS RANGE (subtype = float8);
CREATE TYPE timerange AS RANGE (subtype = time);
CREATE DOMAIN posint AS integer NOT NULL CHECK (VALUE > 0);
CREATE DOMAIN email AS text CHECK (VALUE IS NOT NULL) CHECK (VALUE LIKE '%@%');
CREATE DOMAIN maybe_text AS varchar(20);
CREATE DOMAIN int_list AS int[];

CREATE TABLE customers (
    id posint PRIMARY KEY,
    mail email,
    home address,
    office address[],
    hours floatrange,
    nick maybe_text,
    lucky int_list
);

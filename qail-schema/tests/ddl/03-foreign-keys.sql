-- Foreign keys: column and table level, named and unnamed, composite, self-referencing,
-- referencing the primary key implicitly.
CREATE TABLE countries (code char(2) PRIMARY KEY, name text NOT NULL);

CREATE TABLE ports (
    id bigint PRIMARY KEY,
    country char(2) NOT NULL REFERENCES countries,
    parent bigint REFERENCES ports (id),
    CONSTRAINT ports_country_named FOREIGN KEY (country) REFERENCES countries (code) ON DELETE CASCADE
);

CREATE TABLE berths (
    port bigint,
    nr int,
    PRIMARY KEY (port, nr),
    FOREIGN KEY (port) REFERENCES ports
);

CREATE TABLE moorings (
    id int PRIMARY KEY,
    port bigint,
    berth int,
    FOREIGN KEY (port, berth) REFERENCES berths (port, nr)
);

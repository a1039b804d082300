-- Arrays of several dimensions and element types.
CREATE TYPE color AS ENUM ('red', 'green');

CREATE TABLE grids (
    id int PRIMARY KEY,
    cells int[],
    matrix float8[][],
    names varchar(10)[],
    fixed int[3],
    colors color[],
    stamps timestamptz[] NOT NULL DEFAULT ARRAY[]::timestamptz[]
);

CREATE TABLE sites (
    id serial PRIMARY KEY,
    name text NOT NULL,
    location geo_point,
    timezone text NOT NULL DEFAULT 'UTC'
);

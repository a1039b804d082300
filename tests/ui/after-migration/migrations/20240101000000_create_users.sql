CREATE TABLE users (
    id bigserial PRIMARY KEY,
    email text NOT NULL,
    nickname text
);

-- Quoted and reserved identifiers, mixed case.
CREATE TABLE "order" (
    "id" int PRIMARY KEY,
    "select" text,
    "Total" numeric NOT NULL,
    "user" text
);

CREATE TABLE "User" (
    "Id" int PRIMARY KEY,
    "E-Mail" text UNIQUE,
    UnquotedMixed int,
    "order" int REFERENCES "order" ("id")
);

CREATE TYPE "Status" AS ENUM ('Open', 'closed', 'with space');

CREATE TABLE "user tickets" ("Ticket ID" serial PRIMARY KEY, status "Status" NOT NULL);

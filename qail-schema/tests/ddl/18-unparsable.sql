-- Statements sqlparser cannot parse are reported by line and skipped; later ones still apply.
CREATE TABLE before_error (id int PRIMARY KEY);
ALTER TABLE before_error SET SCHEMA public;
CREATE AGGREGATE my_sum (int) (sfunc = int4pl, stype = int);
CREATE TABLE after_error (id int PRIMARY KEY, ref int REFERENCES before_error);

-- DROP of tables, views, types, functions, schemas.
CREATE SCHEMA scratch;
CREATE TABLE scratch.t (x int);
CREATE TABLE keep (id int PRIMARY KEY);
CREATE TABLE gone (id int);
CREATE VIEW gone_view AS SELECT id FROM keep;
CREATE TYPE gone_type AS ENUM ('a');
CREATE DOMAIN gone_domain AS int;
CREATE FUNCTION gone_fn(int) RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION kept_fn(int) RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION kept_fn(text) RETURNS int LANGUAGE sql AS 'SELECT 2';

DROP VIEW gone_view;
DROP TABLE gone;
DROP TABLE IF EXISTS never_existed;
DROP TYPE gone_type;
DROP DOMAIN gone_domain;
DROP FUNCTION gone_fn(int);
DROP FUNCTION kept_fn(text);
DROP SCHEMA scratch CASCADE;

CREATE TABLE referenced (id int PRIMARY KEY);
CREATE TABLE referencing (id int PRIMARY KEY, r int REFERENCES referenced);
DROP TABLE referenced CASCADE;
CREATE TEMPORARY TABLE scratchpad (x int);

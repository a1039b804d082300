DROP SCHEMA billing;

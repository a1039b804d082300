DROP FUNCTION IF EXISTS seat_count(integer);

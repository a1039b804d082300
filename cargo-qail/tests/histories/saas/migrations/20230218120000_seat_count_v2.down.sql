DROP FUNCTION seat_count(integer);

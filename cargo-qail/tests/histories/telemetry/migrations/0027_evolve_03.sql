ALTER TABLE sites ADD COLUMN altitude_m positive_int;

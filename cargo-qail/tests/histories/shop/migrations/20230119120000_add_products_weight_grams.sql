ALTER TABLE products ADD COLUMN weight_grams integer;

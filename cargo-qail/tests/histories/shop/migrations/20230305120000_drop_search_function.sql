DROP FUNCTION search_products(text, integer);

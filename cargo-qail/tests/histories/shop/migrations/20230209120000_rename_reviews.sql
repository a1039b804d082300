ALTER TABLE reviews RENAME TO product_reviews;
ALTER TABLE product_reviews RENAME COLUMN body TO comment;

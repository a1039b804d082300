CREATE TYPE discount_kind AS ENUM ('percent', 'fixed');
CREATE TABLE coupons (
    code text PRIMARY KEY,
    kind discount_kind NOT NULL,
    amount numeric(10, 2) NOT NULL,
    valid_until date
);
ALTER TABLE orders ADD COLUMN coupon_code text REFERENCES coupons (code);

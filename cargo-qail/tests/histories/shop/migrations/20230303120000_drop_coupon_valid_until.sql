ALTER TABLE coupons DROP COLUMN valid_until;

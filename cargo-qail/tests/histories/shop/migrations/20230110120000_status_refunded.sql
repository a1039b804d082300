ALTER TYPE order_status ADD VALUE 'refunded';

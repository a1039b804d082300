ALTER TYPE order_status ADD VALUE 'returned' AFTER 'shipped';

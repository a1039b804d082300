CREATE INDEX orders_status_idx ON orders (status) WHERE status <> 'shipped';

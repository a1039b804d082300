-- qail:no-transaction
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, attempted_at);

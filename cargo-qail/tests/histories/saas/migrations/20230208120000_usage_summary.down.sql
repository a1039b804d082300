DROP MATERIALIZED VIEW billing.monthly_usage;

CREATE MATERIALIZED VIEW billing.monthly_usage AS
SELECT subscription_id, date_trunc('month', day) AS month, sum(requests) AS requests
FROM billing.usage GROUP BY 1, 2;

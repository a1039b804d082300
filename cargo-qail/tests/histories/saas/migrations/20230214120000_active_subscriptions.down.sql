DROP FUNCTION billing.active_subscriptions(integer);

DROP TABLE billing.subscriptions; DROP TYPE billing.subscription_state;

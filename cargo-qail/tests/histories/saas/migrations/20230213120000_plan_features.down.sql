DROP TABLE billing.plan_features;

DROP TABLE billing.plans;

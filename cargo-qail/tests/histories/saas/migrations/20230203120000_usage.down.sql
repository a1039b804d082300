DROP TABLE billing.usage;

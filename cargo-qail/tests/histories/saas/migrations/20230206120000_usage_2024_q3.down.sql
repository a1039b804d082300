DROP TABLE billing.usage_2024_q3;

CREATE TABLE billing.usage (
    subscription_id bigint NOT NULL REFERENCES billing.subscriptions (id),
    day date NOT NULL,
    requests bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (subscription_id, day)
) PARTITION BY RANGE (day);

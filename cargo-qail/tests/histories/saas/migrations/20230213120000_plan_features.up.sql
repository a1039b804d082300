CREATE TABLE billing.plan_features (
    plan_id smallint NOT NULL REFERENCES billing.plans (id) ON DELETE CASCADE,
    feature text NOT NULL,
    PRIMARY KEY (plan_id, feature)
);

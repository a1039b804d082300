CREATE TABLE webhook_deliveries (
    id bigserial PRIMARY KEY,
    webhook_id integer NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    status_code smallint,
    attempted_at timestamptz NOT NULL DEFAULT now()
);

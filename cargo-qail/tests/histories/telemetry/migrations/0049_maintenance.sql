CREATE TABLE maintenance (
    id bigserial PRIMARY KEY,
    device_id bigint NOT NULL REFERENCES devices (id),
    performed_at timestamptz NOT NULL DEFAULT now(),
    technician text NOT NULL,
    cost_cents integer
);
ALTER TABLE maintenance ADD CONSTRAINT maintenance_cost_check CHECK (cost_cents >= 0) NOT VALID;

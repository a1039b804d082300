CREATE SEQUENCE invoice_number_seq START 1000;
CREATE TABLE invoices (
    id bigserial PRIMARY KEY,
    order_id bigint NOT NULL REFERENCES orders (id),
    number bigint NOT NULL DEFAULT nextval('invoice_number_seq'),
    issued_at timestamptz NOT NULL DEFAULT now()
);

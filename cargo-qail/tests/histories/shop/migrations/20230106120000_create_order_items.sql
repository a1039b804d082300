CREATE TABLE order_items (
    order_id bigint NOT NULL,
    product_id integer NOT NULL,
    quantity integer NOT NULL DEFAULT 1,
    unit_price_cents integer NOT NULL,
    PRIMARY KEY (order_id, product_id)
);
DO $$ BEGIN
 ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_fk" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE cascade;
EXCEPTION
 WHEN duplicate_object THEN null;
END $$;
DO $$ BEGIN
 ALTER TABLE "order_items" ADD CONSTRAINT "order_items_product_id_fk" FOREIGN KEY ("product_id") REFERENCES "products"("id");
EXCEPTION
 WHEN duplicate_object THEN null;
END $$;

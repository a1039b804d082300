ALTER TABLE invoices RENAME COLUMN number TO invoice_no;

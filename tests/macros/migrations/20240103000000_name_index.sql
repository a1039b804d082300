-- qail:no-transaction
CREATE INDEX CONCURRENTLY mig_harbors_name ON mig_harbors (name);

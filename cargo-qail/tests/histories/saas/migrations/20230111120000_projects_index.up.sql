-- qail:no-transaction
CREATE INDEX CONCURRENTLY projects_org_id_idx ON projects (org_id);

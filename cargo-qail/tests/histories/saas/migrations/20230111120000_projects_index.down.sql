DROP INDEX projects_org_id_idx;

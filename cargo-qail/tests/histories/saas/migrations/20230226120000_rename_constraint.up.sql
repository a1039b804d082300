ALTER TABLE api_keys RENAME CONSTRAINT api_keys_project_id_fkey TO api_keys_project_fk;

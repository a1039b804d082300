ALTER TABLE alerts ADD COLUMN duration interval GENERATED ALWAYS AS (cleared_at - raised_at) STORED;

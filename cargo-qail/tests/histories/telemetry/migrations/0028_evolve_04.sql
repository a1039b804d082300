ALTER TABLE alerts ADD COLUMN acknowledged_by text;

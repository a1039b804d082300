ALTER TABLE sites RENAME TO locations;
ALTER TABLE devices RENAME COLUMN site_id TO location_id;

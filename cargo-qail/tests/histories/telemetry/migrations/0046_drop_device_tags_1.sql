ALTER TABLE device_tags DETACH PARTITION device_tags_1;

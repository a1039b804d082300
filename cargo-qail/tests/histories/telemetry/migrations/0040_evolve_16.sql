ALTER TABLE alerts RENAME TO device_alerts;

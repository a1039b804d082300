CREATE VIEW critical_devices AS
SELECT ds.id, ds.serial, ds.site FROM device_status ds WHERE ds.open_alerts > 0;

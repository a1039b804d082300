DROP VIEW critical_devices;
CREATE OR REPLACE VIEW device_status AS
SELECT d.id, d.serial, s.name AS site, count(a.id) FILTER (WHERE a.cleared_at IS NULL) AS open_alerts,
       d.battery_pct, d.last_seen_at
FROM devices d LEFT JOIN sites s ON s.id = d.site_id LEFT JOIN device_alerts a ON a.device_id = d.id
GROUP BY d.id, s.name;
CREATE VIEW critical_devices AS
SELECT id, serial, site, battery_pct FROM device_status WHERE open_alerts > 0 OR battery_pct < 10;

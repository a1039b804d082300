CREATE VIEW device_status AS
SELECT d.id, d.serial, s.name AS site, count(a.id) FILTER (WHERE a.cleared_at IS NULL) AS open_alerts
FROM devices d LEFT JOIN sites s ON s.id = d.site_id LEFT JOIN alerts a ON a.device_id = d.id
GROUP BY d.id, s.name;

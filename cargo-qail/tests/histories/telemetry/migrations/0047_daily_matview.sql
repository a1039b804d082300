CREATE MATERIALIZED VIEW site_daily AS
SELECT s.id AS site_id, r.at::date AS day, r.kind, avg(r.value) AS average
FROM readings r JOIN devices d ON d.id = r.device_id JOIN sites s ON s.id = d.site_id
GROUP BY 1, 2, 3
WITH NO DATA;

CREATE OR REPLACE FUNCTION latest_reading(p_device bigint, p_kind reading_kind)
RETURNS double precision
AS $$
    SELECT value FROM readings WHERE device_id = p_device AND kind = p_kind ORDER BY at DESC LIMIT 1
$$ LANGUAGE sql STABLE STRICT COST 20;

CREATE FUNCTION latest_reading(p_device bigint, p_kind reading_kind)
RETURNS double precision
LANGUAGE sql STABLE STRICT AS $$
    SELECT value FROM readings WHERE device_id = p_device AND kind = p_kind ORDER BY at DESC LIMIT 1
$$;

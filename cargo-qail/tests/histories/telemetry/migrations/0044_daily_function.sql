CREATE FUNCTION daily_average(p_device bigint, p_kind reading_kind)
RETURNS TABLE (day date, average double precision, samples bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY SELECT at::date, avg(value), count(*) FROM readings
        WHERE device_id = p_device AND kind = p_kind GROUP BY 1 ORDER BY 1;
END
$$;

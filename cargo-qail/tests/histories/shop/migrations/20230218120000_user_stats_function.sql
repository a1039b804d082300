CREATE FUNCTION user_stats(p_user bigint, OUT orders bigint, OUT spent bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT count(*), coalesce(sum(total_cents), 0) INTO orders, spent FROM orders WHERE user_id = p_user;
END
$$;

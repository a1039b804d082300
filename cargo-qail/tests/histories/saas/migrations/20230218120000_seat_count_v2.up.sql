CREATE FUNCTION seat_count(p_org integer, OUT used integer, OUT seat_limit integer)
LANGUAGE sql STABLE AS $$
    SELECT (SELECT count(*)::int FROM memberships WHERE org_id = p_org), o.seat_limit FROM orgs o WHERE o.id = p_org
$$;

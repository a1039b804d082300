CREATE OR REPLACE FUNCTION seat_count(p_org integer) RETURNS integer
LANGUAGE plpgsql STABLE AS $$
DECLARE n integer;
BEGIN
    SELECT count(*) INTO n FROM memberships WHERE org_id = p_org;
    RETURN n;
END
$$;

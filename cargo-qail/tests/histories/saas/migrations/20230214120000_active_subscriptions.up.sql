CREATE FUNCTION billing.active_subscriptions(p_org integer)
RETURNS TABLE (subscription_id bigint, plan_code text, started_at timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT s.id, p.code, s.started_at FROM billing.subscriptions s JOIN billing.plans p ON p.id = s.plan_id
    WHERE s.org_id = p_org AND s.state = 'active'
$$;

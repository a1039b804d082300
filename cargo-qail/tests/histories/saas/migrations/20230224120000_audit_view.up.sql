CREATE VIEW recent_audit AS
SELECT a.id, a.org_id, u.email AS actor, a.action, a.at
FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id
WHERE a.at > now() - interval '30 days';

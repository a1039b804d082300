DROP VIEW recent_audit;

CREATE VIEW org_members AS
SELECT m.org_id, a.id AS account_id, a.email, a.full_name, m.role
FROM memberships m JOIN accounts a ON a.id = m.account_id;

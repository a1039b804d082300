CREATE OR REPLACE VIEW org_members AS
SELECT m.org_id, u.id AS account_id, u.email, u.display_name AS full_name, m.role, m.joined_at
FROM memberships m JOIN users u ON u.id = m.account_id;

DROP VIEW org_members;

DROP TYPE member_role;

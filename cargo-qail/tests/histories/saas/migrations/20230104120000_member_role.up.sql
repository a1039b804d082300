CREATE TYPE member_role AS ENUM ('owner', 'member');

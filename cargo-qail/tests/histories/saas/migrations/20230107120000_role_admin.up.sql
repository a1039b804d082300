ALTER TYPE member_role ADD VALUE 'admin' BEFORE 'member';

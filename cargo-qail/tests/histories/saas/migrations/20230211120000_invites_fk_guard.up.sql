DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'invites_email_check') THEN
    ALTER TABLE invites ADD CONSTRAINT invites_email_check CHECK (email LIKE '%@%');
  END IF;
END $$;

ALTER TABLE users ADD COLUMN marketing_opt_in boolean NOT NULL DEFAULT false;

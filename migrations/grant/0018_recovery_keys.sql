-- The public half of each user's recovery key (Ed25519), registered with the user; its seed is
-- kept on paper only. NULL for users who registered none.
ALTER TABLE users ADD COLUMN recovery_public_key bytea CHECK (length(recovery_public_key) = 32);

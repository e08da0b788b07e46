-- The identity key's signature binding the user's recovery key to it (RecoveryKeyBinding): what a
-- client checks before naming the recovery key in a key statement. NULL when none was made for
-- the current pair of keys (a user without a recovery key, or one changed across a rotation).
ALTER TABLE users ADD COLUMN recovery_binding bytea CHECK (length(recovery_binding) = 64);

-- The recovery key's signature over a rotation statement, when the recovery key approved the
-- rotation. Served with the rotation, and with every `rekey` statement that follows it: verifiers
-- move a family member to the new key at once only with it, otherwise an hour after the rotation
-- was signed (`KeyStatement.minimumDelay`), whatever this service applied.
ALTER TABLE identity_rotations
    ADD COLUMN recovery_signature bytea CHECK (octet_length(recovery_signature) = 64);

-- Rotations that revoke nobody (the owner's stolen device held every FMK of their family
-- members): the same staging, upload and commit as a revocation, with no revoked user. A
-- staging or event without one is a rotation; its key statement is of the new kind `rotate`
-- (version + 1, exactly the holders of the version before, each re-wrapped).
ALTER TABLE revocation_stagings ALTER COLUMN revoked_user_id DROP NOT NULL;
ALTER TABLE revocation_events ALTER COLUMN revoked_user_id DROP NOT NULL;
ALTER TABLE key_statements DROP CONSTRAINT key_statements_kind_check;
ALTER TABLE key_statements ADD CONSTRAINT key_statements_kind_check
    CHECK (kind IN ('create', 'grant', 'revoke', 'transfer', 'adopt', 'rekey', 'rotate'));

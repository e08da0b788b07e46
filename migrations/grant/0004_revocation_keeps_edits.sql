-- A revocation never loses an edit, and a tombstone belongs to its family member.
--
-- 1. Every staged record names the change sequence of the ciphertext the owner's client
--    re-encrypted (`source_change_seq`). The commit swaps in a staged record only if the
--    live record still carries that sequence; a record edited, or created, after the
--    revocation began makes the commit answer 409 `records_changed`, and the client
--    re-encrypts those records and commits again. `begin_change_seq` is the family
--    member's highest change sequence when the revocation began: a live record above it
--    without a staged copy was written since (409), one at or below it was never
--    uploaded (422 `records_missing`).
--    Stagings in flight when this runs carry neither; they are discarded (a client
--    that was uploading gets 404 and begins again).
DELETE FROM revocation_stagings;
ALTER TABLE revocation_stagings ADD COLUMN begin_change_seq bigint NOT NULL CHECK (begin_change_seq >= 0);
ALTER TABLE staged_records ADD COLUMN source_change_seq bigint NOT NULL CHECK (source_change_seq >= 0);

-- 2. Tombstones were keyed by record id alone: a record id deleted in family member A,
--    created again in B and deleted there moved A's tombstone instead of writing B's,
--    so B's devices kept the record and A's change feed announced it.
ALTER TABLE record_tombstones DROP CONSTRAINT record_tombstones_pkey;
ALTER TABLE record_tombstones ADD PRIMARY KEY (family_member_id, record_id);

-- 3. Writes by a user whose revocation is staged are refused (they must not be able to
--    delay their own revocation); the check looks up open stagings by family member and user.
CREATE INDEX revocation_stagings_by_revoked_user ON revocation_stagings (family_member_id, revoked_user_id);

-- An ownership transfer begun from one device is a governed operation too (a thief could hand
-- a family member to an accomplice's account in one request). Several may wait at once, one per
-- family member, so the one-pending rule is per subject.
ALTER TABLE governed_operations DROP CONSTRAINT governed_operations_kind_check;
ALTER TABLE governed_operations ADD CONSTRAINT governed_operations_kind_check
    CHECK (kind IN ('rotate_identity', 'transfer_ownership'));
-- The family member a transfer concerns (NULL for an identity rotation).
ALTER TABLE governed_operations ADD COLUMN subject uuid;
DROP INDEX governed_operations_one_pending;
CREATE UNIQUE INDEX governed_operations_one_pending
    ON governed_operations (user_id, kind, coalesce(subject, '00000000-0000-0000-0000-000000000000'::uuid))
    WHERE state = 'pending';

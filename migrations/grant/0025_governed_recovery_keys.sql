-- A new recovery key, set from one device, is a governed operation too: a thief who could
-- replace the recovery key at once would hold everything it decides.
ALTER TABLE governed_operations DROP CONSTRAINT governed_operations_kind_check;
ALTER TABLE governed_operations ADD CONSTRAINT governed_operations_kind_check
    CHECK (kind IN ('rotate_identity', 'transfer_ownership', 'set_recovery'));

-- A rekey carries a second signature, by the new owner key it names: the old key alone (which a
-- thief may hold) cannot move a family member to a new key.
ALTER TABLE key_statements ADD COLUMN new_owner_signature bytea CHECK (length(new_owner_signature) = 64);

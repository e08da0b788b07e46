-- A transfer approved with the owner's recovery key carries that key's signature over its
-- statement: every verifier accepts it before the statement's own security delay only then.
-- Outside the statement's hash, like the new owner key's signature on a rekey.
ALTER TABLE key_statements ADD COLUMN recovery_signature bytea;

-- The audit service signs each chain head (family member, last seq, last hash) when it
-- appends, so that a reader who checks the log with the service's public key also detects
-- entries cut off its end. Heads written before this migration are signed at start-up.
ALTER TABLE audit_chain_heads ADD COLUMN head_signature bytea CHECK (length(head_signature) = 64);

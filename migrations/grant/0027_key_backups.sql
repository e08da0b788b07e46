-- Each user's private keys escrowed to their recovery key, as the recovery key signed them: the
-- service can neither open nor forge one. One per user, replaced when the identity or the
-- recovery key changes (only the recovery key's holder can write one).
CREATE TABLE key_backups (
    user_id uuid PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
    identity_public_key bytea NOT NULL CHECK (length(identity_public_key) = 32),
    agreement_public_key bytea NOT NULL CHECK (length(agreement_public_key) = 32),
    recovery_public_key bytea NOT NULL CHECK (length(recovery_public_key) = 32),
    ephemeral_public_key bytea NOT NULL CHECK (length(ephemeral_public_key) = 32),
    agreement_key bytea NOT NULL CHECK (length(agreement_key) = 40),
    identity_key bytea NOT NULL CHECK (length(identity_key) = 40),
    master_key bytea NOT NULL CHECK (length(master_key) = 40),
    signature bytea NOT NULL CHECK (length(signature) = 64),
    stored_at timestamptz NOT NULL DEFAULT now()
);

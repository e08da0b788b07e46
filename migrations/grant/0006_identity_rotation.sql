-- Identity-key rotation (key-hierarchy ADR, phase 4). A user replaces their X25519 and
-- Ed25519 identity keys with a statement signed by the previous identity key and by the
-- new one; every statement is kept, so a client that pinned an earlier key can follow the
-- chain to the current one. Once rotated, grants and revocation re-wraps name the key they
-- wrapped to, and a wrap to any key but the grantee's current one is refused: a thief who
-- copied the old keys from a stolen device is never handed another FMK.
ALTER TABLE users ADD COLUMN identity_generation integer NOT NULL DEFAULT 1 CHECK (identity_generation >= 1);

CREATE TABLE identity_rotations (
    user_id                      uuid NOT NULL REFERENCES users (user_id),
    generation                   integer NOT NULL CHECK (generation >= 2),
    previous_identity_public_key bytea NOT NULL CHECK (length(previous_identity_public_key) = 32),
    identity_public_key          bytea NOT NULL CHECK (length(identity_public_key) = 32),
    agreement_public_key         bytea NOT NULL CHECK (length(agreement_public_key) = 32),
    issued_at                    timestamptz NOT NULL,
    previous_key_signature       bytea NOT NULL CHECK (length(previous_key_signature) = 64),
    new_key_signature            bytea NOT NULL CHECK (length(new_key_signature) = 64),
    rotated_at                   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, generation)
);

-- A key once used is never accepted again, by anyone: a rotation back to a stolen key, or
-- to another user's key, is refused by the database itself.
CREATE TABLE retired_identity_keys (
    public_key bytea PRIMARY KEY CHECK (length(public_key) = 32),
    user_id    uuid NOT NULL REFERENCES users (user_id),
    retired_at timestamptz NOT NULL DEFAULT now()
);

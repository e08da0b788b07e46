-- Grant service schema. Zero knowledge: every key column holds a public key, a
-- wrapped key or a hash; every record column holds AES-256-GCM ciphertext.
-- Runs with search_path set to the service's own schema.

-- People and their public keys. The X25519 key is what granters wrap FMKs to;
-- the Ed25519 identity key signs what a user asserts about themselves.
CREATE TABLE users (
    user_id              uuid PRIMARY KEY,
    display_name         text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 200),
    agreement_public_key bytea NOT NULL CHECK (length(agreement_public_key) = 32),
    identity_public_key  bytea NOT NULL CHECK (length(identity_public_key) = 32),
    created_at           timestamptz NOT NULL DEFAULT now()
);

-- A device authenticates with its own Ed25519 key; retiring it ends its sessions.
CREATE TABLE devices (
    device_id          uuid PRIMARY KEY,
    user_id            uuid NOT NULL REFERENCES users (user_id),
    name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    signing_public_key bytea NOT NULL UNIQUE CHECK (length(signing_public_key) = 32),
    registered_at      timestamptz NOT NULL DEFAULT now(),
    retired_at         timestamptz
);
CREATE INDEX devices_active_by_user ON devices (user_id) WHERE retired_at IS NULL;

-- One-time challenges for device authentication (challenge–response).
CREATE TABLE auth_challenges (
    challenge_id uuid PRIMARY KEY,
    device_id    uuid NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
    nonce        bytea NOT NULL CHECK (length(nonce) = 32),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX auth_challenges_expiry ON auth_challenges (expires_at);

-- Bearer tokens are stored as SHA-256 hashes only: a database dump grants no session.
CREATE TABLE auth_tokens (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    device_id  uuid NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (user_id),
    issued_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX auth_tokens_by_device ON auth_tokens (device_id);
CREATE INDEX auth_tokens_expiry ON auth_tokens (expires_at);

-- A family member (patient) and the version of the FMK their records are under.
CREATE TABLE family_members (
    family_member_id    uuid PRIMARY KEY,
    owner_user_id       uuid NOT NULL REFERENCES users (user_id),
    current_fmk_version integer NOT NULL DEFAULT 1 CHECK (current_fmk_version >= 1),
    created_at          timestamptz NOT NULL DEFAULT now(),
    -- Target of the deferred foreign keys below: records and active grants must
    -- sit at the current version whenever a transaction commits.
    UNIQUE (family_member_id, current_fmk_version)
);
CREATE INDEX family_members_by_owner ON family_members (owner_user_id);

-- Monotonic change sequence for incremental sync: a device asks for everything
-- changed after the last sequence it saw.
CREATE SEQUENCE record_change_seq AS bigint;

-- Encrypted records. AES-256-GCM under the family member's FMK with the record
-- id and FMK version bound as associated data.
CREATE TABLE records (
    record_id        uuid PRIMARY KEY,
    family_member_id uuid NOT NULL REFERENCES family_members (family_member_id),
    fmk_version      integer NOT NULL,
    nonce            bytea NOT NULL CHECK (length(nonce) = 12),
    ciphertext       bytea NOT NULL CHECK (length(ciphertext) <= 1048576),
    tag              bytea NOT NULL CHECK (length(tag) = 16),
    change_seq       bigint NOT NULL DEFAULT nextval('record_change_seq'),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- A record is never left at an old FMK version once a transaction commits:
    -- bumping the version without re-encrypting every record fails at COMMIT.
    FOREIGN KEY (family_member_id, fmk_version)
        REFERENCES family_members (family_member_id, current_fmk_version)
        ON UPDATE NO ACTION DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX records_by_family_member ON records (family_member_id, record_id);
CREATE UNIQUE INDEX records_by_change ON records (change_seq);
-- 2 KiB ciphertexts sit just over the TOAST threshold; they do not compress, and
-- keeping them inline makes bulk writes and reads markedly faster.
ALTER TABLE records SET (toast_tuple_target = 8160);
ALTER TABLE records ALTER COLUMN ciphertext SET STORAGE MAIN;

-- Deleted records leave a tombstone so that incremental sync can see deletions.
CREATE TABLE record_tombstones (
    record_id        uuid PRIMARY KEY,
    family_member_id uuid NOT NULL REFERENCES family_members (family_member_id),
    change_seq       bigint NOT NULL DEFAULT nextval('record_change_seq'),
    deleted_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX record_tombstones_by_change ON record_tombstones (family_member_id, change_seq);

-- Who can read a family member's records, and their wrapped copy of the FMK
-- (the sharing ADR's FamilyMemberAccessGrant). `self` grants are the owner's
-- copy wrapped under their master key; `ecdh` grants are wrapped with
-- X25519 → HKDF → AES key wrap from the granter's key to the grantee's.
CREATE TABLE access_grants (
    grant_id                     uuid PRIMARY KEY,
    family_member_id             uuid NOT NULL REFERENCES family_members (family_member_id),
    grantee_user_id              uuid NOT NULL REFERENCES users (user_id),
    granted_by_user_id           uuid NOT NULL REFERENCES users (user_id),
    wrapping                     text NOT NULL CHECK (wrapping IN ('self', 'ecdh')),
    granter_agreement_public_key bytea CHECK (length(granter_agreement_public_key) = 32),
    -- Wiped when the grant is revoked: the server keeps no wrapped key for a
    -- user who lost access.
    wrapped_fmk                  bytea CHECK (length(wrapped_fmk) = 40),
    fmk_version                  integer NOT NULL,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    revoked_at                   timestamptz,
    -- NULL for revoked grants, which MATCH SIMPLE then exempts from the check.
    active_fmk_version           integer GENERATED ALWAYS AS
                                     (CASE WHEN revoked_at IS NULL THEN fmk_version END) STORED,
    CHECK ((revoked_at IS NULL) = (wrapped_fmk IS NOT NULL)),
    CHECK ((wrapping = 'ecdh') = (granter_agreement_public_key IS NOT NULL)),
    CHECK (wrapping = 'ecdh' OR grantee_user_id = granted_by_user_id),
    -- An active grant always wraps the current FMK.
    FOREIGN KEY (family_member_id, active_fmk_version)
        REFERENCES family_members (family_member_id, current_fmk_version)
        ON UPDATE NO ACTION DEFERRABLE INITIALLY DEFERRED
);
-- At most one active grant per grantee and family member.
CREATE UNIQUE INDEX access_grants_one_active
    ON access_grants (family_member_id, grantee_user_id) WHERE revoked_at IS NULL;
CREATE INDEX access_grants_by_grantee ON access_grants (grantee_user_id) WHERE revoked_at IS NULL;
CREATE INDEX access_grants_revoked ON access_grants (revoked_at) WHERE revoked_at IS NOT NULL;

-- One row per committed revocation (the guide's table, plus what the audit
-- trail needs to close it).
CREATE TABLE revocation_events (
    event_id            uuid PRIMARY KEY,
    family_member_id    uuid NOT NULL REFERENCES family_members (family_member_id),
    revoked_user_id     uuid NOT NULL REFERENCES users (user_id),
    revoked_by_user_id  uuid NOT NULL REFERENCES users (user_id),
    new_fmk_version     integer NOT NULL CHECK (new_fmk_version >= 2),
    records_reencrypted integer NOT NULL CHECK (records_reencrypted >= 0),
    revoked_at          timestamptz NOT NULL DEFAULT now(),
    reason              text CHECK (length(reason) <= 500),
    UNIQUE (family_member_id, new_fmk_version)
);

-- A revocation in progress: re-encrypted records are uploaded here in batches
-- and swapped in by one commit transaction. Abandoned stagings expire.
CREATE TABLE revocation_stagings (
    staging_id         uuid PRIMARY KEY,
    family_member_id   uuid NOT NULL REFERENCES family_members (family_member_id),
    revoked_user_id    uuid NOT NULL REFERENCES users (user_id),
    started_by_user_id uuid NOT NULL REFERENCES users (user_id),
    from_fmk_version   integer NOT NULL,
    reason             text CHECK (length(reason) <= 500),
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz NOT NULL
);
CREATE INDEX revocation_stagings_expiry ON revocation_stagings (expires_at);

CREATE TABLE staged_records (
    staging_id uuid NOT NULL REFERENCES revocation_stagings (staging_id) ON DELETE CASCADE,
    record_id  uuid NOT NULL,
    nonce      bytea NOT NULL CHECK (length(nonce) = 12),
    ciphertext bytea NOT NULL CHECK (length(ciphertext) <= 1048576),
    tag        bytea NOT NULL CHECK (length(tag) = 16),
    PRIMARY KEY (staging_id, record_id)
);
ALTER TABLE staged_records SET (toast_tuple_target = 8160);
ALTER TABLE staged_records ALTER COLUMN ciphertext SET STORAGE MAIN;

-- Transactional outbox: written in the same transaction as the change it
-- announces, published by the relay, marked sent only after the broker acked.
CREATE TABLE outbox (
    outbox_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic      text NOT NULL,
    message_key text NOT NULL,
    payload    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz
);
CREATE INDEX outbox_unsent ON outbox (outbox_id) WHERE sent_at IS NULL;

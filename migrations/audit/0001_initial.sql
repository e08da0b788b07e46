-- Audit service schema. The service stores what it was told and what it
-- concluded; audit details are sealed to the family member owner's X25519 key
-- (crypto_box_seal) and cannot be read back here.
-- Runs with search_path set to the service's own schema.

-- Every event applied, by id: a redelivered event changes nothing.
CREATE TABLE processed_events (
    event_id         uuid PRIMARY KEY,
    kind             text NOT NULL,
    family_member_id uuid NOT NULL,
    processed_at     timestamptz NOT NULL DEFAULT now()
);

-- The current owner of each family member, as the latest event says; the
-- access-log API answers the owner only, and new entries are sealed to this key.
CREATE TABLE family_members (
    family_member_id           uuid PRIMARY KEY,
    owner_user_id              uuid NOT NULL,
    owner_agreement_public_key bytea NOT NULL CHECK (length(owner_agreement_public_key) = 32),
    owner_since                timestamptz NOT NULL
);

-- The guide's audit_log, plus the hash chain: each entry's hash covers its
-- fields and the previous entry's hash within the same family member's chain,
-- and is signed by the audit service, so an edit, removal or reordering is
-- detected by verification (and cannot be hidden by recomputing the hashes).
CREATE TABLE audit_log (
    log_id            uuid PRIMARY KEY,
    family_member_id  uuid NOT NULL,
    seq               bigint NOT NULL CHECK (seq >= 1),
    event_type        text NOT NULL,
    actor_user_id     uuid NOT NULL,
    target_user_id    uuid,
    encrypted_details bytea NOT NULL,
    occurred_at       timestamptz NOT NULL,
    -- The event (or revocation) the entry records: one entry per type and source.
    source_id         uuid NOT NULL,
    prev_hash         bytea NOT NULL CHECK (length(prev_hash) = 32),
    entry_hash        bytea NOT NULL CHECK (length(entry_hash) = 32),
    signature         bytea NOT NULL CHECK (length(signature) = 64),
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (family_member_id, seq),
    UNIQUE (source_id, event_type)
);

-- The last entry of each chain; appends lock this row, so a chain never forks.
CREATE TABLE audit_chain_heads (
    family_member_id uuid PRIMARY KEY,
    last_seq         bigint NOT NULL,
    last_hash        bytea NOT NULL CHECK (length(last_hash) = 32)
);

-- One row per committed revocation, and its progress towards completion.
CREATE TABLE revocations (
    event_id                   uuid PRIMARY KEY,
    family_member_id           uuid NOT NULL,
    owner_user_id              uuid NOT NULL,
    owner_agreement_public_key bytea NOT NULL CHECK (length(owner_agreement_public_key) = 32),
    revoked_user_id            uuid NOT NULL,
    revoked_by_user_id         uuid NOT NULL,
    new_fmk_version            integer NOT NULL,
    records_reencrypted        integer NOT NULL,
    reason                     text,
    committed_at               timestamptz NOT NULL,
    received_at                timestamptz NOT NULL DEFAULT now(),
    deadline_at                timestamptz NOT NULL,
    completed_at               timestamptz,
    commit_to_last_ack_ms      bigint
);
CREATE INDEX revocations_open ON revocations (deadline_at) WHERE completed_at IS NULL;
CREATE INDEX revocations_by_family_member ON revocations (family_member_id, committed_at DESC);

-- Every device a revocation expects to act, with the key its ack must be signed with.
CREATE TABLE revocation_devices (
    event_id           uuid NOT NULL REFERENCES revocations (event_id),
    device_id          uuid NOT NULL,
    user_id            uuid NOT NULL,
    action             text NOT NULL CHECK (action IN ('fmk_rotation', 'secure_deletion')),
    signing_public_key bytea NOT NULL CHECK (length(signing_public_key) = 32),
    state              text NOT NULL DEFAULT 'pending'
                       CHECK (state IN ('pending', 'applied', 'already_applied', 'failed', 'overdue')),
    ack_id             uuid,
    acked_at           timestamptz,
    ack_received_at    timestamptz,
    records_processed  integer,
    fmk_version        integer,
    duration_ms        integer,
    error              text,
    late               boolean NOT NULL DEFAULT false,
    overdue_at         timestamptz,
    PRIMARY KEY (event_id, device_id)
);
CREATE INDEX revocation_devices_waiting ON revocation_devices (event_id) WHERE state IN ('pending', 'overdue', 'failed');

-- Every verified acknowledgement, by id (a redelivered ack changes nothing).
CREATE TABLE device_acks (
    ack_id            uuid PRIMARY KEY,
    event_id          uuid NOT NULL REFERENCES revocations (event_id),
    device_id         uuid NOT NULL,
    command_id        uuid NOT NULL,
    outcome           text NOT NULL,
    records_processed integer NOT NULL,
    fmk_version       integer NOT NULL,
    duration_ms       integer NOT NULL,
    error             text,
    acked_at          timestamptz NOT NULL,
    received_at       timestamptz NOT NULL DEFAULT now()
);

-- Acks read before their revocation event (another topic, so another order):
-- kept unverified, by position, until the event arrives or they expire.
CREATE TABLE pending_acks (
    topic        text NOT NULL,
    partition    integer NOT NULL,
    kafka_offset bigint NOT NULL,
    event_id     uuid NOT NULL,
    envelope     bytea NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (topic, partition, kafka_offset)
);
CREATE INDEX pending_acks_by_event ON pending_acks (event_id);
CREATE INDEX pending_acks_by_age ON pending_acks (received_at);

-- Refused messages, by position (a redelivery is not a second rejection). The
-- envelope is kept (truncated) for investigation; it was never trusted.
CREATE TABLE rejected_messages (
    rejection_id     bigserial PRIMARY KEY,
    topic            text NOT NULL,
    partition        integer NOT NULL,
    kafka_offset     bigint NOT NULL,
    reason           text NOT NULL,
    signer           text,
    family_member_id uuid,
    event_id         uuid,
    device_id        uuid,
    envelope         bytea,
    received_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (topic, partition, kafka_offset)
);

-- Signed notifications waiting for Kafka, written in the transaction that
-- reached the conclusion; the relay publishes and marks them.
CREATE TABLE notification_outbox (
    notification_id  uuid PRIMARY KEY,
    seq              bigserial UNIQUE,
    family_member_id uuid,
    kind             text NOT NULL,
    envelope         bytea NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    sent_at          timestamptz
);
CREATE INDEX notification_outbox_unsent ON notification_outbox (seq) WHERE sent_at IS NULL;

-- What the live event stream (SSE) shows, in order; `stream_id` is the SSE event
-- id, so a reconnecting client resumes where it stopped.
CREATE TABLE stream_events (
    stream_id        bigserial PRIMARY KEY,
    family_member_id uuid,
    type             text NOT NULL,
    data             jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stream_events_by_age ON stream_events (created_at);

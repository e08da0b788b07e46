-- Key chain violations (issue 16): an honest client's report that it refused a key
-- history the grant service offered. Agents sign them onto device_acks; the CLI sends
-- them over HTTPS with its device's grant-service token. One row per report_id: a
-- replayed report changes nothing.
CREATE TABLE key_chain_violations (
    report_id             uuid PRIMARY KEY,
    code                  text NOT NULL,
    family_member_id      uuid NOT NULL,
    reporter_user_id      uuid NOT NULL,
    reporter_device_id    uuid NOT NULL,
    offered_fmk_version   integer,
    statement_seq         integer,
    verified_seq          integer NOT NULL,
    detail                text NOT NULL,
    detected_at           timestamptz NOT NULL,
    -- device_signature (checked with a key a revocation event listed for the device),
    -- device_token (HTTPS, a grant-service token of that device), or unverified_device
    -- (signed, but by a device the audit service has no key for).
    verification          text NOT NULL
                          CHECK (verification IN ('device_signature', 'device_token', 'unverified_device')),
    received_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX key_chain_violations_recent ON key_chain_violations (received_at DESC);
CREATE INDEX key_chain_violations_by_family_member ON key_chain_violations (family_member_id, received_at DESC);

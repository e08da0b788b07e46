-- The exposure report of each revocation (RevocationExposure in RescindProtocol): what the
-- revoked user's devices could hold at the commit — per device the last FMK version and
-- change-feed position it fetched, when, and how many records it had been given. Taken in the
-- commit's own transaction from device_sync_state and the staged records, then sealed to the
-- committing owner's X25519 key (an anonymous sealed box): the service wrote it but cannot read
-- it back, and serves the sealed bytes to that owner only. device_sync_state itself stays
-- metadata the service keeps in clear (README, Security model).
CREATE TABLE revocation_exposures (
    event_id          uuid PRIMARY KEY REFERENCES revocation_events (event_id) ON DELETE CASCADE,
    family_member_id  uuid NOT NULL REFERENCES family_members (family_member_id),
    sealed_to_user_id uuid NOT NULL REFERENCES users (user_id),
    sealed_report     bytea NOT NULL CHECK (length(sealed_report) > 48),
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revocation_exposures_by_owner ON revocation_exposures (sealed_to_user_id);

-- Issue 17, item 2: each expected device's command has a lifecycle, not just a final ack.
-- `pending` is "issued, nothing heard yet"; `delivered` and `not_now` are the device's signed
-- receipts on the way to an answer (stored in its inbox; held sealed while it is locked);
-- `healed` is a final answer like `already_applied` (the device healed past the revocation
-- before the command reached it, e.g. after an absence beyond the topic's retention).
ALTER TABLE revocation_devices DROP CONSTRAINT revocation_devices_state_check;
ALTER TABLE revocation_devices ADD CONSTRAINT revocation_devices_state_check
    CHECK (state IN ('pending', 'delivered', 'not_now', 'applied', 'already_applied', 'healed', 'failed', 'overdue',
                     'reissued', 'expired'));
-- Commands sent to the device for this revocation (the grant service's, then re-issues),
-- and when the state last changed.
ALTER TABLE revocation_devices ADD COLUMN attempts integer NOT NULL DEFAULT 1 CHECK (attempts >= 1);
ALTER TABLE revocation_devices ADD COLUMN state_changed_at timestamptz;

DROP INDEX revocation_devices_waiting;
CREATE INDEX revocation_devices_waiting ON revocation_devices (event_id)
    WHERE state IN ('pending', 'delivered', 'not_now', 'overdue', 'failed', 'reissued');

-- Receipts (`delivered`, `not_now`) are kept like answers: device_acks is each device's
-- history. A re-issued command's ack names the original command and its attempt.
ALTER TABLE device_acks ADD COLUMN original_command_id uuid;
ALTER TABLE device_acks ADD COLUMN attempt integer CHECK (attempt >= 1);
CREATE INDEX device_acks_by_device ON device_acks (event_id, device_id, acked_at);

-- Re-issues: a failed, overdue or unanswered device is sent its revocation's command again
-- (with backoff, up to the configured attempts), as a `rescind.command_reissue.v1` message
-- signed by this service under a new command id. The outbox also carries them, to
-- device_commands, keyed by device.
CREATE TABLE command_reissues (
    reissue_id          uuid PRIMARY KEY,
    event_id            uuid NOT NULL REFERENCES revocations (event_id),
    device_id           uuid NOT NULL,
    original_command_id uuid,
    attempt             integer NOT NULL CHECK (attempt >= 2),
    issued_at           timestamptz NOT NULL
);
CREATE INDEX command_reissues_by_device ON command_reissues (event_id, device_id);
ALTER TABLE notification_outbox ADD COLUMN destination text CHECK (destination IN ('device_commands'));
ALTER TABLE notification_outbox ADD COLUMN message_key uuid;

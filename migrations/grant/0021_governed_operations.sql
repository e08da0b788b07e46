-- Operations that change who a user is, made from one device without the recovery key, wait
-- for the deployment's security delay before they take effect, and another device of the user
-- (or the recovery key) can veto them meanwhile. A veto freezes the device that began the
-- operation: its governance requests are refused until another device or the recovery key
-- clears it.
CREATE TABLE governed_operations (
    operation_id  uuid PRIMARY KEY,
    user_id       uuid NOT NULL REFERENCES users (user_id),
    kind          text NOT NULL CHECK (kind IN ('rotate_identity')),
    -- The signed request, as submitted (an identity rotation: statement and both signatures).
    body          jsonb NOT NULL,
    initiated_by  uuid NOT NULL REFERENCES devices (device_id),
    received_at   timestamptz NOT NULL DEFAULT now(),
    effective_at  timestamptz NOT NULL CHECK (effective_at >= received_at + interval '1 hour'),
    state         text NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'applied', 'vetoed', 'cancelled', 'withdrawn', 'superseded')),
    -- Who decided it: a device of the user, the recovery key, or the delay running out.
    decided_by    text CHECK (decided_by IN ('device', 'recovery_key', 'delay', 'retirement')),
    decided_by_device uuid REFERENCES devices (device_id),
    decided_at    timestamptz,
    CHECK ((state = 'pending') = (decided_at IS NULL))
);
-- One pending operation of a kind per user: a second waits until the first is decided.
CREATE UNIQUE INDEX governed_operations_one_pending ON governed_operations (user_id, kind) WHERE state = 'pending';
CREATE INDEX governed_operations_due ON governed_operations (effective_at) WHERE state = 'pending';

ALTER TABLE devices ADD COLUMN frozen_at timestamptz;
-- From when a device may approve or veto a governed operation: at once for a user's first device
-- and for one the recovery key enrolled; a security delay after an enrolment by another device,
-- so a device a thief enrols cannot approve the thief's own operations.
ALTER TABLE devices ADD COLUMN governs_from timestamptz NOT NULL DEFAULT now();

-- Enrolment proves the user, not a token: a new device is accepted only with the user's
-- identity key's signature over a statement that names a fresh, single-use challenge
-- from this table. A challenge belongs to the user and to the device that asked for it,
-- so retiring that device ends its open challenges with its tokens.
CREATE TABLE enrolment_challenges (
    challenge_id uuid PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (user_id),
    device_id    uuid NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
    nonce        bytea NOT NULL CHECK (length(nonce) = 32),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX enrolment_challenges_expiry ON enrolment_challenges (expires_at);
CREATE INDEX enrolment_challenges_by_device ON enrolment_challenges (device_id);

-- What `rescind device list` shows besides the name: an optional kind, and when the
-- device last made an authenticated call (kept to the minute, so that a busy device
-- writes its row at most once a minute).
ALTER TABLE devices
    ADD COLUMN kind text CHECK (kind IN ('phone', 'tablet', 'laptop', 'desktop', 'server', 'other')),
    ADD COLUMN last_used_at timestamptz;

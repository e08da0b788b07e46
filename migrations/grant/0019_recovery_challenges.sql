-- Single-use challenges for orders signed by a user's recovery key (enrol, retire or restore a
-- device at once). Anonymous callers ask for them, so each user has only a few live at a time.
CREATE TABLE recovery_challenges (
    challenge_id uuid PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (user_id),
    nonce        bytea NOT NULL CHECK (length(nonce) = 32),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz
);
CREATE INDEX recovery_challenges_by_user ON recovery_challenges (user_id, expires_at);

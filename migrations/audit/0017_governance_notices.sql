-- The grant service's governance notices (changes to who a user is: governed identity
-- rotations and transfers, pending and decided; enrolments, retirements, restorations), as
-- announced on access_events: one row per notice, which also deduplicates a redelivery.
-- Identifiers and times only; `notice` is the payload as published.
CREATE TABLE governance_notices (
    notice_id    uuid PRIMARY KEY,
    user_id      uuid NOT NULL,
    change       text NOT NULL,
    state        text NOT NULL,
    occurred_at  timestamptz NOT NULL,
    notice       jsonb NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX governance_notices_by_user ON governance_notices (user_id, occurred_at DESC);
CREATE INDEX governance_notices_by_time ON governance_notices (occurred_at DESC);

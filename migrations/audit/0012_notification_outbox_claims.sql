-- The notification relay claims a batch in one short statement and publishes it outside
-- any transaction (issue 18, item 4): while Kafka is down, no transaction, row lock or
-- pool connection waits for the producer's send timeout. A claim is a lease: a relay that
-- crashed between claiming and marking sent leaves rows that any replica takes again once
-- `claimed_until` has passed (at-least-once; consumers dedupe by notification_id).
ALTER TABLE notification_outbox ADD COLUMN claimed_until timestamptz;

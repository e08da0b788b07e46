-- Bounded storage for what an anonymous Kafka writer can make the audit service keep.
--
-- rejected_messages: every rejection is counted in rejection_tallies (per clock hour, topic,
-- partition and reason; the counts survive any flood), but only the first rows of each
-- such bucket are stored (RESCIND_AUDIT_REJECTIONS_PER_HOUR), with their bodies only while
-- the bucket's hourly byte budget lasts (RESCIND_AUDIT_REJECTED_BYTES_PER_HOUR). Both
-- tables are pruned after RESCIND_AUDIT_REJECTION_RETENTION_DAYS by the janitor.
CREATE TABLE rejection_tallies (
    window_start timestamptz NOT NULL,
    topic        text NOT NULL,
    partition    integer NOT NULL,
    reason       text NOT NULL,
    rejected     bigint NOT NULL DEFAULT 0,
    stored       integer NOT NULL DEFAULT 0,
    stored_bytes bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (window_start, topic, partition, reason)
);
INSERT INTO rejection_tallies (window_start, topic, partition, reason, rejected, stored, stored_bytes)
SELECT date_trunc('hour', received_at), topic, partition, reason, count(*), count(*),
       coalesce(sum(length(envelope)), 0)
FROM rejected_messages GROUP BY 1, 2, 3, 4;
CREATE INDEX rejected_messages_by_age ON rejected_messages (received_at);

-- pending_acks: held per claimed device (at most RESCIND_AUDIT_HELD_ACKS_PER_DEVICE) and in
-- all (RESCIND_AUDIT_HELD_ACKS_MAX), each at most 16 KiB; the oldest is evicted first, those
-- whose signature a key the service already knows for the claimed device verifies last.
ALTER TABLE pending_acks ADD COLUMN device_id uuid;
ALTER TABLE pending_acks ADD COLUMN key_verified boolean NOT NULL DEFAULT false;
CREATE INDEX pending_acks_by_device ON pending_acks (device_id);
-- The keys a device signed with in earlier revocations, looked up for every held ack.
CREATE INDEX revocation_devices_by_device ON revocation_devices (device_id);

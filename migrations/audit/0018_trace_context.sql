-- Trace context (W3C `traceparent` and `tracestate`) kept with what outlives the message that
-- carried it: a revocation keeps the context its event was recorded under, which the command
-- re-issues of that revocation link to; an outbox row keeps the context the relay continues in
-- the Kafka headers of what it publishes. NULL when tracing is off or the message carried none.
-- Only a context this service formatted is stored.
ALTER TABLE revocations
    ADD COLUMN traceparent text CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'),
    ADD COLUMN tracestate text CHECK (length(tracestate) <= 512);
ALTER TABLE notification_outbox
    ADD COLUMN traceparent text CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'),
    ADD COLUMN tracestate text CHECK (length(tracestate) <= 512);

-- The trace context of the request whose transaction wrote the row (W3C `traceparent` and
-- `tracestate`), which the relay continues in the Kafka message's headers; NULL when tracing is
-- off or the request carried none. Only a context this service formatted is stored.
ALTER TABLE outbox
    ADD COLUMN traceparent text CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'),
    ADD COLUMN tracestate text CHECK (length(tracestate) <= 512);

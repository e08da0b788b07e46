-- The trace context of the request whose transaction kept the command (as `outbox.traceparent`),
-- handed to the device with the command at check-in, so that a device that missed the command on
-- Kafka links its answer to the revocation's trace. NULL when tracing is off or the request
-- carried none. Only a context this service formatted is stored.
ALTER TABLE device_commands
    ADD COLUMN traceparent text CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');

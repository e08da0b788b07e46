-- Every signed command each device was sent, kept so that a device can fetch what it missed
-- (GET /v1/devices/self/commands?after=…): one offline for longer than the topic keeps
-- messages still gets its revocation's command at its next check-in and answers it (the MDM
-- model). Written in the commit's transaction beside the outbox row (which the janitor deletes
-- once sent); the envelope is the very bytes published on device_commands, signed by the
-- grant service, so the agent verifies it exactly as one read from Kafka.
CREATE TABLE device_commands (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    command_id uuid NOT NULL UNIQUE,
    device_id  uuid NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
    event_id   uuid NOT NULL,
    envelope   bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX device_commands_by_device ON device_commands (device_id, seq);

-- Which devices must answer a revocation (DeviceRole in RescindProtocol): agents keep a
-- cache of keys and records and acknowledge every command; interactive clients (the CLI)
-- keep none and are not expected. Devices registered before this migration were all
-- treated as agents, and stay so.
ALTER TABLE devices
    ADD COLUMN role text NOT NULL DEFAULT 'agent' CHECK (role IN ('agent', 'interactive'));

-- A device's certificate: the user's recovery key vouching that the device's signing key is one
-- of the user's devices (`DeviceCertificate`, canonical JSON). Checked against the recovery key
-- and the device's key when stored; served with the device, so that the device can attach it
-- to its approvals.
ALTER TABLE devices ADD COLUMN certificate bytea;

-- The certified devices that approved a rotation (`DeviceApproval`s, a canonical JSON array).
-- Served with the rotation and with every `rekey` that follows it: two from different certified
-- devices let verifiers move a family member to the new key at once, as the recovery key's
-- signature does.
ALTER TABLE identity_rotations ADD COLUMN device_approvals bytea;

-- The same for a `transfer` statement: its device approvals, outside the statement's hash like its
-- recovery key's signature; two from different certified devices make it take effect at once.
ALTER TABLE key_statements ADD COLUMN device_approvals bytea;

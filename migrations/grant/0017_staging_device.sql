-- A staging (the begin → upload → commit of a revocation or rotation) belongs to the device
-- that began it, not only to its user: a device the thief enrolled with a stolen identity key
-- must not be able to upload into, abandon or commit the owner's revocation in flight from
-- another device. Upload, commit and abandon from any other device (even of the same user) are
-- refused with 403 `staging_owned_by_other_device`; retiring a device abandons the stagings it
-- began in the same transaction.
--
-- Stagings in flight when this runs name no device, and no device can be proven to have begun
-- them: they are discarded, as abandon does it (their staged bodies queued for the janitor,
-- their staged rows deleted; nothing is swapped in, no record changes). A client that was
-- uploading gets 404 and begins again (`rescind revoke` and `rescind rotate --everywhere`
-- resume from their plan by beginning anew).
INSERT INTO record_body_garbage (body_id) SELECT body_id FROM staged_records;
DELETE FROM staged_records;
DELETE FROM revocation_stagings;
ALTER TABLE revocation_stagings
    ADD COLUMN started_by_device_id uuid NOT NULL REFERENCES devices (device_id);
-- Retiring a device finds the stagings it began.
CREATE INDEX revocation_stagings_by_device ON revocation_stagings (started_by_device_id);

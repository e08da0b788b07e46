-- Last check-in, per device and family member: the FMK version of the last key the device
-- fetched (GET …/key) and the furthest change-feed position it was given (GET …/records, the
-- change sequence of the last change on a page it received), with when. It is what the device
-- could hold, the basis of a revocation's exposure report. A device that read the feed before it
-- ever fetched the key here is entered at the version of the ciphertext it was given; a page
-- with no change moves no position (change_seq stays NULL until one does).
--
-- Cheap to keep: one upsert per key fetch or feed page, which changes the row only when the
-- version or the position moved or the row is a minute old (like devices.last_used_at), so a
-- device that polls rewrites it at most once a minute. A refused fetch writes nothing.
CREATE TABLE device_sync_state (
    device_id        uuid NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
    family_member_id uuid NOT NULL REFERENCES family_members (family_member_id),
    fmk_version      integer NOT NULL CHECK (fmk_version >= 1),
    change_seq       bigint CHECK (change_seq >= 0),
    fetched_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_id, family_member_id)
);
-- The exposure report reads every device of one family member.
CREATE INDEX device_sync_state_by_family_member ON device_sync_state (family_member_id);

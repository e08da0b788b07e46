-- Restorable records: a record deleted or overwritten keeps its previous ciphertext for the
-- restore window (`RESCIND_GRANT_RECORD_VERSION_RETENTION_DAYS`, 30 by default), restorable by
-- the family member's owner alone; the janitor deletes versions past the window.
--
-- Zero knowledge unchanged: a kept version is the record's ciphertext as it was (AES-256-GCM
-- under the family member's FMK, the record id and FMK version bound as associated data), in
-- `record_bodies` like every live body. Every revocation and rotation re-encrypts the kept
-- versions with the live records (the owner's client uploads them to
-- `staged_record_versions`), and the same deferred foreign key as `records` makes the database
-- refuse to commit a version bump that leaves one at the old FMK version: nothing a revoked or
-- stolen device held opens a version kept after the revocation.

CREATE TABLE record_versions (
    version_id       uuid PRIMARY KEY,
    family_member_id uuid NOT NULL REFERENCES family_members (family_member_id),
    record_id        uuid NOT NULL,
    -- `deleted`: the record was deleted; `overwritten`: a newer ciphertext replaced this one
    -- (a write, or a restore of another version).
    kind             text NOT NULL CHECK (kind IN ('deleted', 'overwritten')),
    fmk_version      integer NOT NULL,
    body_id          uuid NOT NULL UNIQUE,
    -- Who deleted or overwrote it; the device when known.
    by_user_id       uuid NOT NULL,
    by_device_id     uuid,
    created_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (family_member_id, fmk_version)
        REFERENCES family_members (family_member_id, current_fmk_version)
        ON UPDATE NO ACTION DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX record_versions_by_record ON record_versions (family_member_id, record_id, created_at);
CREATE INDEX record_versions_by_age ON record_versions (created_at);

-- A revocation's re-encrypted versions, as `staged_records` holds its records' (narrow rows
-- naming a body written once into `record_bodies`); deleted with their staging.
CREATE TABLE staged_record_versions (
    staging_id uuid NOT NULL REFERENCES revocation_stagings (staging_id) ON DELETE CASCADE,
    version_id uuid NOT NULL,
    body_id    uuid NOT NULL,
    PRIMARY KEY (staging_id, version_id)
);

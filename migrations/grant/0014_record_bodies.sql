-- Issue 19, item 2: a revocation writes each record's ciphertext once.
--
-- Until now a revocation's upload wrote every re-encrypted body into `staged_records` and
-- its commit wrote it again into `records` (UPDATE … FROM staged_records), logging each old
-- page whole after a checkpoint: 3.8× the WAL of a COPY of the same bytes. Bodies now live
-- in `record_bodies`, written once and never updated. `records` and `staged_records` keep
-- narrow rows that name a body (`body_id`); the commit's swap points each record at its
-- staged body, and queues the old body's id in `record_body_garbage` in the same
-- transaction; the janitor deletes queued bodies afterwards. A body referenced by nothing
-- (queued, or staged by a revocation that was abandoned or expired) is never visible:
-- every reader reaches a body through `records.body_id`.
--
-- Zero knowledge unchanged: the same AES-256-GCM ciphertexts (the record id and FMK version
-- bound as associated data), in another table. Nothing new in clear.

CREATE TABLE record_bodies (
    body_id    uuid PRIMARY KEY,
    nonce      bytea NOT NULL CHECK (length(nonce) = 12),
    ciphertext bytea NOT NULL CHECK (length(ciphertext) <= 1048576),
    tag        bytea NOT NULL CHECK (length(tag) = 16)
);
-- As `records` had it: 2 KiB ciphertexts do not compress and are faster kept inline.
ALTER TABLE record_bodies SET (toast_tuple_target = 8160);
ALTER TABLE record_bodies ALTER COLUMN ciphertext SET STORAGE MAIN;

-- Bodies no record or staging refers to any more, deleted by the janitor after the
-- transaction that queued them committed.
CREATE TABLE record_body_garbage (
    body_id   uuid PRIMARY KEY,
    queued_at timestamptz NOT NULL DEFAULT now()
);

-- Existing records: each body moves once, under a fresh id (one rewrite of `records`, in
-- this migration's transaction). The dropped columns' space is reused as rows are next
-- written (a revocation rewrites every row of its family member).
ALTER TABLE records ADD COLUMN body_id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE records ALTER COLUMN body_id DROP DEFAULT;
INSERT INTO record_bodies (body_id, nonce, ciphertext, tag) SELECT body_id, nonce, ciphertext, tag FROM records;
ALTER TABLE records DROP COLUMN nonce, DROP COLUMN ciphertext, DROP COLUMN tag;
ALTER TABLE records ADD CONSTRAINT records_body_unique UNIQUE (body_id);

-- Revocations in flight keep their uploads: their staged bodies move the same way.
ALTER TABLE staged_records ADD COLUMN body_id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE staged_records ALTER COLUMN body_id DROP DEFAULT;
INSERT INTO record_bodies (body_id, nonce, ciphertext, tag) SELECT body_id, nonce, ciphertext, tag FROM staged_records;
ALTER TABLE staged_records DROP COLUMN nonce, DROP COLUMN ciphertext, DROP COLUMN tag;

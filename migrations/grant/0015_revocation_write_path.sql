-- Issue 19, item 2: three costs of a revocation's write path that bought nothing.
--
-- 1. The upload checked its staging once per staged row. `staged_records.staging_id`
--    referenced `revocation_stagings` with ON DELETE CASCADE: every uploaded row fired the
--    foreign key's trigger (a lookup of its staging, FOR KEY SHARE), 500 per batch, costing
--    more than inserting the narrow row itself (a loop inside the server, 10,000 rows, loaded
--    machine: 192–254 ms with the key, 72–133 ms without). The upload already holds its
--    staging FOR KEY SHARE for its whole transaction (`RevocationStore.upload`), so the
--    staging a row names cannot be missing; every statement that deletes a staging (the
--    commit, an abandon, the janitor's expiry) deletes its staged rows in the same
--    transaction, as the cascade did.
--
-- 2. The commit's swap updated five indexes per record. It gives every record a new body and
--    change sequence (so no update is HOT): a new entry in each of `records`' indexes.
--    `records_by_family_member (family_member_id, record_id)` served only the begin's list of
--    record ids in id order, which `records_by_family_member_change` and a sort now serve;
--    lookups by record id use the primary key. Without it the swap of 100,000 records took
--    2.6 s instead of 3.9–4.4 s (same statement on a copy of the tables, loaded machine), and
--    every record write maintains one index less; the begin's sort costs ~0.1 s at 100,000.
--
-- 3. The commit queued every replaced body in an indexed queue. `record_body_garbage`'s
--    primary key made queueing 100,000 old bodies cost 0.69–0.83 s instead of 0.26–0.37 s
--    (same statement, loaded machine). Nothing needs the key: the janitor takes queued rows by
--    their physical position (`RecordBodies.collect`), and a body queued twice (no write path
--    does it) is deleted once.
--
-- All instant on a populated database (nothing is rewritten); revocations in flight keep
-- their staged rows, queued bodies stay queued.

ALTER TABLE staged_records DROP CONSTRAINT staged_records_staging_id_fkey;
DROP INDEX records_by_family_member;
ALTER TABLE record_body_garbage DROP CONSTRAINT record_body_garbage_pkey;

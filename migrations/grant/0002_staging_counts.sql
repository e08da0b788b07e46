-- A revocation's upload answers "how many staged, how many expected" after every
-- batch. Counting staged_records each time made an upload of n records cost O(n²)
-- index reads; the staging row now keeps both counts. expected_count is the
-- family member's record count when the revocation began (the commit still checks
-- that every current record was re-encrypted).
ALTER TABLE revocation_stagings
    ADD COLUMN staged_count   integer NOT NULL DEFAULT 0 CHECK (staged_count >= 0),
    ADD COLUMN expected_count integer NOT NULL DEFAULT 0 CHECK (expected_count >= 0);

UPDATE revocation_stagings s
SET staged_count   = (SELECT count(*) FROM staged_records r WHERE r.staging_id = s.staging_id),
    expected_count = (SELECT count(*) FROM records r WHERE r.family_member_id = s.family_member_id);

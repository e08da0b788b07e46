-- Owner-signed key statements (issue 16): per family member, the chain of statements that
-- introduce each FMK version and name who holds it, each signed with the owner's Ed25519
-- identity key. The service stores and serves them and checks each new one against the head
-- (defence in depth), but holds no owner key and so cannot make one: clients verify the chain.
--
-- `body` is the statement's canonical JSON exactly as signed; `hash` is SHA-256 of body ‖
-- signature, which the next statement's previous_hash names.
CREATE TABLE key_statements (
    family_member_id uuid    NOT NULL REFERENCES family_members (family_member_id),
    seq              integer NOT NULL CHECK (seq >= 1),
    fmk_version      integer NOT NULL CHECK (fmk_version >= 1),
    kind             text    NOT NULL CHECK (kind IN ('create', 'grant', 'revoke', 'transfer', 'adopt', 'rekey')),
    body             bytea   NOT NULL CHECK (length(body) <= 1048576),
    signature        bytea   NOT NULL CHECK (length(signature) = 64),
    hash             bytea   NOT NULL CHECK (length(hash) = 32),
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (family_member_id, seq)
);

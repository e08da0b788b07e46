-- Invitations (sharing ADR): an owner's signed, single-use invitation, valid for at most
-- seven days. The service keeps the invitation as signed and the first acceptance, signed by
-- the invitee's identity key and by the one-time invitation key whose private half only the
-- token holds: the service can neither make an acceptance nor change one without the
-- inviter's client noticing. A second acceptance is refused by the primary key of
-- invitation_acceptances itself.
CREATE TABLE invitations (
    invitation_id         uuid PRIMARY KEY,
    inviter_user_id       uuid NOT NULL REFERENCES users (user_id),
    family_member_id      uuid REFERENCES family_members (family_member_id),
    invitation            bytea NOT NULL,          -- the signed invitation, canonical JSON
    created_at            timestamptz NOT NULL,
    expires_at            timestamptz NOT NULL,
    CHECK (expires_at > created_at AND expires_at <= created_at + interval '7 days')
);
CREATE INDEX invitations_by_inviter ON invitations (inviter_user_id, created_at);

CREATE TABLE invitation_acceptances (
    invitation_id   uuid PRIMARY KEY REFERENCES invitations (invitation_id),
    invitee_user_id uuid NOT NULL REFERENCES users (user_id),
    acceptance      bytea NOT NULL,                -- the signed acceptance, canonical JSON
    accepted_at     timestamptz NOT NULL DEFAULT now()
);

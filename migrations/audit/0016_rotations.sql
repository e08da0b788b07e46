-- A rotation that revokes nobody (the owner's stolen device) is tracked like a revocation:
-- every expected device rotates; it names no revoked user.
ALTER TABLE revocations ALTER COLUMN revoked_user_id DROP NOT NULL;

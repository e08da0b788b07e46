-- The device that enrolled each device (NULL: the user's first device, or one the recovery key
-- enrolled). A device enrolled by another is provisional until it governs (`governs_from`, a
-- security delay later): retiring the device that enrolled it retires it too, so a device a
-- thief enrols from a stolen phone goes with the phone; and retiring it meanwhile vetoes the
-- enrolment, which freezes the device that enrolled it.
ALTER TABLE devices ADD COLUMN enrolled_by uuid REFERENCES devices (device_id);
CREATE INDEX devices_enrolled_by ON devices (enrolled_by) WHERE enrolled_by IS NOT NULL AND retired_at IS NULL;

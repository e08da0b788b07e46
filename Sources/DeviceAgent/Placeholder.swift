// Placeholder; the device agent lands here (issue 4).

// Placeholder until the device agent lands (issue 4); harmless next to its sources.

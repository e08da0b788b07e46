// Placeholder; the audit/notification service lands here (issue 5).

import Testing

/// Every user-facing command of the `rescind` binary, run as a separate process against real
/// services started in-process: what it prints on success, and that each failure is one
/// clear line with a non-zero exit (or, for a bad command line, exit 64 with the usage).
/// Serialized: each test runs its own grant service, and the machine has two cores.
@Suite(.serialized) enum CLITests {}

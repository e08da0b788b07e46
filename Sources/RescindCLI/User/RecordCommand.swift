import ArgumentParser
import Foundation
import RescindClient

/// Records: encrypted on this machine before upload, decrypted after download.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Add, list and decrypt a family member's records.",
        discussion: """
            Examples:
              rescind record add 6f1c… --text "2025-01-05 MMR vaccination, dose 1"
              rescind record show 6f1c… --all
              rescind record trash 6f1c…
              rescind record restore 6f1c… 2b9e…
            """,
        subcommands: [Add.self, List.self, Show.self, Trash.self, Restore.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Encrypt a record under the current FMK and upload it.",
            discussion: """
                Examples:
                  rescind record add 6f1c… --text "2025-01-05 MMR vaccination, dose 1"
                  rescind record add 6f1c… --file lab-result.pdf
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID
        @Option(help: "The record's text.") var text: String?
        @Option(help: "A file whose bytes are the record.") var file: String?

        func validate() throws {
            guard (text == nil) != (file == nil) else { throw ValidationError("give exactly one of --text or --file") }
        }

        func run() async throws {
            let plaintext: [UInt8]
            switch (text, file) {
            case (let text?, nil): plaintext = Array(text.utf8)
            case (nil, let file?):
                guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read \(file)") }
                plaintext = [UInt8](data)
            default: throw ValidationError("give exactly one of --text or --file")
            }
            let session = try await profile.session()
            let (fmk, version) = try await session.currentFMK(familyMember)
            let id = try await session.putRecord(familyMember, plaintext: plaintext, fmk: fmk, version: version)
            print(id.uuidString.lowercased())
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List records (id, FMK version, size); nothing is decrypted.",
            discussion: "Examples:\n  rescind record list 6f1c…\n  rescind record list 6f1c… --json")
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID
        @OptionGroup var output: JSONOption

        /// A record as `--json` lists it: no ciphertext.
        struct Summary: Encodable {
            let recordID: UUID
            let fmkVersion: Int
            let bytes: Int

        }

        func run() async throws {
            let records = try await profile.session().allRecords(familyMember)
            if output.json {
                return try output.print(records.map { Summary(recordID: $0.recordID, fmkVersion: $0.fmkVersion, bytes: $0.ciphertext.count) })
            }
            for record in records {
                print("\(record.recordID.uuidString.lowercased())  v\(record.fmkVersion)  \(record.ciphertext.count) bytes")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decrypt one record (or all with --all) and print it.",
            discussion: """
                With --json, an array of {record_id, fmk_version, text} (the plaintext as UTF-8,
                invalid bytes replaced).

                Examples:
                  rescind record show 6f1c… 2b9e…
                  rescind record show 6f1c… --all --json
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID
        @Argument(help: "Record id.") var record: UUID?
        @Flag(help: "Every record.") var all = false
        @OptionGroup var output: JSONOption

        /// A record as `--json` shows it, decrypted.
        struct Opened: Encodable {
            let recordID: UUID
            let fmkVersion: Int
            let text: String

        }

        func validate() throws {
            guard all == (record == nil) else { throw ValidationError("give a record id, or --all (not both)") }
        }

        func run() async throws {
            let session = try await profile.session()
            let (fmk, _) = try await session.currentFMK(familyMember)
            let records = try await session.allRecords(familyMember).filter { all || $0.recordID == record }
            guard !records.isEmpty else {
                throw CLIError(record.map { "no record \($0.uuidString.lowercased()) in this family member" } ?? "no records")
            }
            let opened = try records.map {
                Opened(recordID: $0.recordID, fmkVersion: $0.fmkVersion, text: String(decoding: try RecordCipher.open($0, fmk: fmk), as: UTF8.self))
            }
            if output.json { return try output.print(opened) }
            for record in opened {
                print(all ? "\(record.recordID.uuidString.lowercased())  \(record.text)" : record.text)
            }
        }
    }

    struct Trash: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the deleted and overwritten records you can restore (the owner's alone).",
            discussion: """
                One line per kept version, newest first: record id, deleted or overwritten, when
                (UTC, to the minute), by which device, and the version id (`restore --version`).
                Any device with write access can delete or overwrite a record; the owner can
                restore it for the retention period the grant service keeps versions (30 days by
                default). Kept versions are re-encrypted at every revocation and rotation.

                Examples:
                  rescind record trash 6f1c…
                  rescind record trash 6f1c… --json
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID
        @OptionGroup var output: JSONOption

        func run() async throws {
            let list = try await profile.session().trash(familyMember)
            if output.json { return try output.print(list) }
            guard !list.versions.isEmpty else {
                print("nothing deleted or overwritten in the last \(list.retentionDays) days")
                return
            }
            for version in list.versions {
                print(
                    [
                        version.recordID.uuidString.lowercased(), version.kind.rawValue,
                        DevicesCommand.List.time(version.createdAt),
                        "by device " + (version.byDeviceID?.uuidString.lowercased() ?? "unknown"),
                        "version " + version.versionID.uuidString.lowercased(),
                    ].joined(separator: "  "))
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Restore a deleted or overwritten record (the owner's alone).",
            discussion: """
                Restores the latest kept version of the record (or --version, from `record trash`);
                the record it replaces, if any, is kept in turn, so a restore can be undone.

                Example:
                  rescind record restore 6f1c… 2b9e…
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "Family member id.") var familyMember: UUID
        @Argument(help: "Record id.") var record: UUID
        @Option(help: "A version id from `record trash` (default: the latest).") var version: UUID?

        func run() async throws {
            let restored = try await profile.session().restoreRecord(familyMember, record, version: version)
            print("restored \(restored.recordID.uuidString.lowercased())  v\(restored.fmkVersion)  \(restored.ciphertext.count) bytes")
        }
    }
}

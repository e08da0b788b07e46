import ArgumentParser
import Foundation
import RescindProtocol

/// The user's enrolled devices: list them, retire a lost or stolen one.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "List your devices, and retire a lost or stolen one.",
        discussion: """
            A new device is enrolled only with your identity key's signature (`rescind-agent
            provision-device` on one of your devices does it); a stolen device's token alone
            enrols nothing. Retiring a device ends its tokens and open challenges at once.

            Examples:
              rescind device list
              rescind device retire 0c7d…   (from any other of your devices)
            """,
        subcommands: [List.self, Retire.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List your devices: id, name, kind, role, enrolled, last used, retired, and what each fetched.",
            discussion: """
                Times are UTC; "last used" is the device's last authenticated call, to the minute.
                Role "agent": keeps a cache and must acknowledge every revocation touching you;
                "interactive" (this CLI): keeps nothing, so revocations do not wait for it.

                Under each device, one line per family member it fetched anything of: the FMK
                version of the last key it fetched, the furthest change-feed position (change
                sequence) it was given, and when it last fetched either (to the minute). That is
                what the device could hold — the basis of a revocation's exposure report. A
                refused fetch (after a revocation) changes nothing.
                  family member 3f2a0c1e-… v2 at seq 120, 2026-11-25 03:20Z

                Examples:
                  rescind device list
                  rescind device list --json
                """)
        @OptionGroup var profile: ProfileOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let session = try await profile.session()
            let devices = try await session.client.devices()
            if output.json { return try output.print(DeviceList(devices: devices)) }
            let rows = devices.map { device in
                [
                    device.deviceID.uuidString.lowercased(), device.name, device.kind?.rawValue ?? "-", device.role.rawValue,
                    Self.time(device.registeredAt), device.lastUsedAt.map(Self.time) ?? "never",
                    device.retiredAt.map(Self.time) ?? "-",
                    device.deviceID == session.deviceID ? "(this device)" : "",
                ]
            }
            let header = ["device", "name", "kind", "role", "enrolled", "last used", "retired", ""]
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            func line(_ row: [String]) -> String {
                let cells = row.indices.map { $0 == row.count - 1 ? row[$0] : row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                return cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            }
            print(line(header))
            for (device, row) in zip(devices, rows) {
                print(line(row))
                for state in device.familyMembers ?? [] { print(Self.checkIn(state)) }
            }
        }

        /// `  family member F v2 at seq 120, 2026-11-25 03:20Z`: the last key version and change-feed
        /// position the device fetched, and when.
        static func checkIn(_ state: DeviceSyncState) -> String {
            let position = state.changeSeq.map { " at seq \($0)" } ?? ", no change fetched"
            return "  family member \(state.familyMemberID.uuidString.lowercased()) v\(state.fmkVersion)\(position), \(time(state.fetchedAt))"
        }

        static func time(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm'Z'"
            return formatter.string(from: date)
        }
    }

    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Retire one of your devices: its tokens and open challenges die at once, and it cannot sign in again.",
            discussion: """
                The device's next call is refused (401), it can obtain no new token, and it
                can enrol no device. It keeps what it already held (cached records and, if its
                keystore can be unlocked, your keys); docs/security-model.md says what a
                stolen device can still do and what to do next.

                Example:
                  rescind device retire 0c7d2e4a-…   (the id from `rescind device list`)
                """)
        @OptionGroup var profile: ProfileOptions
        @Argument(help: "The device's id (from `rescind device list`).") var device: UUID

        func run() async throws {
            let session = try await profile.session()
            try await session.client.retireDevice(device)
            print("retired device \(device.uuidString.lowercased()): its tokens and open challenges are gone")
            if device == session.deviceID {
                print("that was this profile's device: it can no longer sign in")
            }
        }
    }
}

extension DeviceKind: ExpressibleByArgument {}

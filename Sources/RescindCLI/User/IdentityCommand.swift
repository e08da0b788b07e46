import ArgumentParser
import DeviceAgent
import Foundation
import RescindProtocol

/// Creates or shows this profile's user identity.
struct IdentityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity",
        abstract: "Create or show your user identity (keys stay in the encrypted profile).",
        discussion: """
            Examples:
              RESCIND_PASSPHRASE=… rescind identity create --name "Adult A"
              rescind identity show --profile ~/.rescind-adult-b
            """,
        subcommands: [Create.self, Show.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Generate your keys, register them with the grant service, and write the encrypted profile.",
            discussion: """
                Generates an X25519 key (FMKs are wrapped to it), an Ed25519 identity key, a master
                key and this device's key; only public keys leave the machine.

                Example:
                  RESCIND_PASSPHRASE=… rescind identity create --name "Adult A"
                """)

        @OptionGroup var profile: ProfileOptions
        @Option(help: "Your display name.") var name: String
        @Option(help: "This device's name.") var deviceName: String?
        @Option(help: "This device's kind: \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", ")).")
        var deviceKind: DeviceKind?

        func run() async throws {
            let enrolled = try await DeviceEnrollment.registerNewUser(
                displayName: name, deviceName: deviceName ?? "\(name)'s rescind CLI", deviceKind: deviceKind,
                configuration: try await profile.configuration())
            print("user   \(enrolled.userID.uuidString.lowercased())")
            print("device \(enrolled.deviceID.uuidString.lowercased())")
            print("profile \(profile.directory) (encrypted; keep the passphrase safe)")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print your user id, device id and public keys.",
            discussion: "Example:\n  rescind identity show")

        @OptionGroup var profile: ProfileOptions

        func run() async throws {
            let session = try await profile.session()
            print("user              \(session.keys.userID.uuidString.lowercased())")
            print("device            \(session.deviceID.uuidString.lowercased())")
            print("agreement key     \(Data(session.keys.agreementKey.publicKey.rawRepresentation).base64EncodedString())")
            print("identity key      \(Data(session.keys.identityKey.publicKey.rawRepresentation).base64EncodedString())")
        }
    }
}

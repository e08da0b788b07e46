import CSodium

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Argon2id {
    /// The parameters a master key was derived with; store them beside the keystore.
    ///
    /// JSON form (stable): `{"algorithm":"argon2id13","opsLimit":3,"memLimit":67108864,
    /// "salt":"<base64 of 16 bytes>"}`. Derivation always uses the stored values, never the
    /// current defaults.
    public struct Parameters: Codable, Sendable, Hashable {
        /// The only accepted algorithm: Argon2id version 1.3 (0x13).
        public static let argon2id13 = "argon2id13"
        /// Default passes over memory (libsodium's "moderate" is 3).
        public static let defaultOpsLimit: UInt64 = 3
        /// Default memory in bytes: 64 MiB.
        public static let defaultMemLimit: UInt64 = 67_108_864
        public static let saltByteCount = 16
        /// Largest memory limit accepted from storage (4 GiB), so a tampered keystore cannot
        /// make the process allocate without bound.
        public static let maximumMemLimit: UInt64 = 4 << 30

        public let algorithm: String
        /// Argon2 time cost (passes).
        public let opsLimit: UInt64
        /// Memory in bytes (Argon2's m is this / 1024 KiB).
        public let memLimit: UInt64
        /// 16 random bytes, unique per keystore.
        public let salt: [UInt8]

        public init(algorithm: String, opsLimit: UInt64, memLimit: UInt64, salt: [UInt8]) {
            self.algorithm = algorithm
            self.opsLimit = opsLimit
            self.memLimit = memLimit
            self.salt = salt
        }

        /// Current defaults with a fresh random salt, for a new keystore.
        public static func generate() -> Parameters {
            Sodium.ensureInitialized()
            var salt = [UInt8](repeating: 0, count: saltByteCount)
            randombytes_buf(&salt, saltByteCount)
            return Parameters(algorithm: argon2id13, opsLimit: defaultOpsLimit, memLimit: defaultMemLimit, salt: salt)
        }

        /// - Throws: `CryptoError.unsupportedParameters` unless the algorithm is Argon2id v1.3,
        ///   the salt 16 bytes and the limits within libsodium's bounds and `maximumMemLimit`.
        func validate() throws {
            let opsRange = UInt64(crypto_pwhash_argon2id_opslimit_min())...UInt64(crypto_pwhash_argon2id_opslimit_max())
            let memRange =
                UInt64(
                    crypto_pwhash_argon2id_memlimit_min()
                )...min(
                    UInt64(crypto_pwhash_argon2id_memlimit_max()),
                    Self.maximumMemLimit
                )
            guard algorithm == Self.argon2id13, salt.count == Self.saltByteCount,
                opsRange.contains(opsLimit), memRange.contains(memLimit)
            else {
                throw CryptoError(.unsupportedParameters)
            }
        }

        private enum CodingKeys: String, CodingKey {
            case algorithm, opsLimit, memLimit, salt
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            algorithm = try container.decode(String.self, forKey: .algorithm)
            opsLimit = try container.decode(UInt64.self, forKey: .opsLimit)
            memLimit = try container.decode(UInt64.self, forKey: .memLimit)
            let encodedSalt = try container.decode(String.self, forKey: .salt)
            guard let salt = Data(base64Encoded: encodedSalt) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .salt,
                    in: container,
                    debugDescription: "salt is not base64"
                )
            }
            self.salt = Array(salt)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(algorithm, forKey: .algorithm)
            try container.encode(opsLimit, forKey: .opsLimit)
            try container.encode(memLimit, forKey: .memLimit)
            try container.encode(Data(salt).base64EncodedString(), forKey: .salt)
        }
    }
}

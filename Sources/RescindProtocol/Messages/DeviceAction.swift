/// What a device must do after a revocation.
public enum DeviceAction: String, Codable, Sendable, CaseIterable {
    /// The device's user keeps access: fetch the new wrapped FMK and re-key the cache.
    case fmkRotation = "fmk_rotation"
    /// The device's user lost access: make the cached records undecryptable and destroy the keys.
    case secureDeletion = "secure_deletion"
}

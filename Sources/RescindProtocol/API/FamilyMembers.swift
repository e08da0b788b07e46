import Foundation
import RescindMacros

/// Creates a family member with the owner's copy of FMK v1, wrapped under the owner's master key.
@MemberwiseInit
public struct CreateFamilyMemberRequest: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var wrappedFMK: Data
    /// The owner's signed `create` statement (seq 1, v1, the owner's copy as sole holder).
    public var statement: SignedKeyStatement? = nil
}

/// A family member and the FMK version their records are under.
@MemberwiseInit
public struct FamilyMemberResponse: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var ownerUserID: UUID
    public var currentFMKVersion: Int
    public var createdAt: Date
}

/// The family members a user has an active grant for.
@MemberwiseInit
public struct FamilyMemberList: Codable, Sendable, Equatable {
    public var familyMembers: [FamilyMemberResponse]
}

/// The current FMK version, which devices compare with their own to self-heal.
@MemberwiseInit
public struct FMKVersionResponse: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var currentFMKVersion: Int
}

/// Hands ownership to a user who already holds an active grant.
@MemberwiseInit
public struct TransferOwnershipRequest: Codable, Sendable, Equatable {
    public var newOwnerUserID: UUID
    /// The current owner's signed `transfer` statement naming the new owner and their identity key.
    public var statement: SignedKeyStatement? = nil
}

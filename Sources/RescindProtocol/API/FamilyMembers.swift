import Foundation

/// Creates a family member with the owner's copy of FMK v1, wrapped under the owner's master key.
public struct CreateFamilyMemberRequest: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var wrappedFMK: Data
    /// The owner's signed `create` statement (seq 1, v1, the owner's copy as sole holder).
    public var statement: SignedKeyStatement?

    public init(familyMemberID: UUID, wrappedFMK: Data, statement: SignedKeyStatement? = nil) {
        self.familyMemberID = familyMemberID
        self.wrappedFMK = wrappedFMK
        self.statement = statement
    }
}

/// A family member and the FMK version their records are under.
public struct FamilyMemberResponse: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var ownerUserID: UUID
    public var currentFMKVersion: Int
    public var createdAt: Date

    public init(familyMemberID: UUID, ownerUserID: UUID, currentFMKVersion: Int, createdAt: Date) {
        self.familyMemberID = familyMemberID
        self.ownerUserID = ownerUserID
        self.currentFMKVersion = currentFMKVersion
        self.createdAt = createdAt
    }
}

/// The family members a user has an active grant for.
public struct FamilyMemberList: Codable, Sendable, Equatable {
    public var familyMembers: [FamilyMemberResponse]

    public init(familyMembers: [FamilyMemberResponse]) {
        self.familyMembers = familyMembers
    }
}

/// The current FMK version, which devices compare with their own to self-heal.
public struct FMKVersionResponse: Codable, Sendable, Equatable {
    public var familyMemberID: UUID
    public var currentFMKVersion: Int

    public init(familyMemberID: UUID, currentFMKVersion: Int) {
        self.familyMemberID = familyMemberID
        self.currentFMKVersion = currentFMKVersion
    }
}

/// Hands ownership to a user who already holds an active grant.
public struct TransferOwnershipRequest: Codable, Sendable, Equatable {
    public var newOwnerUserID: UUID
    /// The current owner's signed `transfer` statement naming the new owner and their identity key.
    public var statement: SignedKeyStatement?

    public init(newOwnerUserID: UUID, statement: SignedKeyStatement? = nil) {
        self.newOwnerUserID = newOwnerUserID
        self.statement = statement
    }
}

public import Models

/// When each field group of a user was last written, in milliseconds since 1970 by the writer's
/// clock (the `updatedAt` the writer sent, or the server's time when it sent none).
///
/// A group without a version holds its default and was never written: any write wins over it.
public struct UserVersions: Hashable, Sendable {
    public var millisecondsByGroup: [UserFieldGroup: Int64]

    public init(_ millisecondsByGroup: [UserFieldGroup: Int64] = [:]) {
        self.millisecondsByGroup = millisecondsByGroup
    }

    public subscript(group: UserFieldGroup) -> Int64? {
        get { millisecondsByGroup[group] }
        set { millisecondsByGroup[group] = newValue }
    }
}

/// Where a runtime store keeps each user's field-group versions. They are written by
/// `RuntimeStore.commit(_:)` (`RuntimeCommit.userVersions`), in the same transaction as the
/// engine snapshot they describe, so a version never stands for a profile that was not stored.
///
/// Contract: a commit with versions sets the groups it names and leaves the others as they were;
/// `userVersions` returns what the last commits set (nil for a user with none).
public protocol UserVersionStore: Sendable {
    func userVersions(userID: UserID) throws(StoreError) -> UserVersions?
}

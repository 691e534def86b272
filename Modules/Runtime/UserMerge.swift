public import Models
public import Storage

/// A write of some of a user's field groups (`UserFieldGroup`), stamped with the writer's time.
public struct UserUpdate: Hashable, Sendable {
    /// The values the write proposes; only the fields of `groups` are taken from it.
    public var proposed: UserProfile
    /// The groups the write carries. A user being created takes the other groups from
    /// `proposed` too (their defaults) but leaves them unversioned.
    public var groups: Set<UserFieldGroup>
    /// When the writer made the change, in milliseconds since 1970; nil: the runtime's clock.
    public var updatedAtMilliseconds: Int64?

    public init(proposed: UserProfile, groups: Set<UserFieldGroup>, updatedAtMilliseconds: Int64? = nil) {
        self.proposed = proposed
        self.groups = groups
        self.updatedAtMilliseconds = updatedAtMilliseconds
    }
}

/// Last-write-wins per field group: a pure function of what is stored and what is written.
///
/// A group of the write is **applied** unless the stored version of that group is newer than
/// the write's stamp; then it is **stale** and keeps what is stored (last-write-wins,
/// per group). On **equal** stamps the later arrival wins: the server commits writes one at a
/// time, so the outcome is still decided by one order, two writes stamped by the server's clock
/// in the same second resolve as they arrived, and a retry of a write is applied again (changing
/// nothing).
public enum UserMerge {
    public struct Outcome: Hashable, Sendable {
        /// The user as it stands after the write.
        public var profile: UserProfile
        /// The versions after the write (unwritten groups have none).
        public var versions: UserVersions
        public var applied: Set<UserFieldGroup>
        public var stale: Set<UserFieldGroup>
    }

    /// `stored` is nil for a user being created; `stamp` is the write's time in milliseconds.
    public static func merge(
        stored: UserProfile?, versions: UserVersions, update: UserUpdate, stampMilliseconds stamp: Int64
    ) -> Outcome {
        var profile = stored ?? update.proposed
        var merged = versions
        var applied = Set<UserFieldGroup>()
        var stale = Set<UserFieldGroup>()
        for group in UserFieldGroup.allCases where update.groups.contains(group) {
            if stored != nil, let version = versions[group], version > stamp {
                stale.insert(group)
                continue
            }
            applied.insert(group)
            copy(group, from: update.proposed, to: &profile)
            merged[group] = stamp
        }
        return Outcome(profile: profile, versions: merged, applied: applied, stale: stale)
    }

    /// The fields of each group.
    static func copy(_ group: UserFieldGroup, from source: UserProfile, to target: inout UserProfile) {
        switch group {
        case .timeZone:
            target.timeZone = source.timeZone
        case .profile:
            target.displayName = source.displayName
            target.motivationalStyle = source.motivationalStyle
            target.privacyLevel = source.privacyLevel
            target.locale = source.locale
        case .communication:
            target.communication = source.communication
        case .preferences:
            target.preferences = source.preferences
        }
    }
}

public import Models

/// When an app asks the system to wake it in the background to refresh its plan (a
/// `BGAppRefreshTask` on iOS): the plan a device holds runs out at its horizon's end (the daily
/// series fire on; one-offs end there), and the system runs a refresh late or never, so the
/// kit asks early and often enough that a late run still lands before the plan runs out.
public struct PlanRefresh: Hashable, Sendable {
    /// The longest wait between refreshes.
    public var intervalSeconds: Int64
    /// How long before the horizon's end a refresh is asked for at the latest.
    public var marginSeconds: Int64
    /// The shortest wait: the system does not run refreshes more often than about this.
    public var minimumSeconds: Int64

    public init(intervalSeconds: Int64 = 4 * 3_600, marginSeconds: Int64 = 12 * 3_600, minimumSeconds: Int64 = 900) {
        self.intervalSeconds = intervalSeconds
        self.marginSeconds = marginSeconds
        self.minimumSeconds = minimumSeconds
    }

    /// The earliest begin date of the next refresh, asked at `now` by a device whose plan's
    /// horizon ends at `horizonEnd` (nil: it holds no plan yet).
    public func nextRefresh(at now: Instant, horizonEnd: Instant?) -> Instant {
        guard let horizonEnd else { return now + minimumSeconds }
        let beforeTheEnd = horizonEnd.secondsSinceEpoch - marginSeconds - now.secondsSinceEpoch
        return now + max(minimumSeconds, min(intervalSeconds, beforeTheEnd))
    }
}

import Delivery
import Models
import Runtime
import Scheduling
import SimulatedPlatform

/// The channels' promises for one user, rebuilt from what was sent and shown, apart from the
/// server's own registry, so a bug there cannot hide itself:
/// - `noPushToRetiredToken`: nothing is sent to a token after a 410 retired it;
/// - `silentWithinBudget`: at most `SilentPushPlan.perHour` background pushes accepted in any hour;
/// - `noOccurrenceOnTwoChannels`: an occurrence is shown on one channel only (local or remote).
struct ChannelChecker {
    private var retiredTokens: Set<String> = []
    private var silentAccepted: [Int64] = []
    /// Occurrences shown in the last week and their channel.
    private var shownOn = FiringMap<(channel: DeliveryChannel, at: Int64)>()
    private var nextTrimAt: Int64 = .min

    mutating func observeRetired(_ token: String) { retiredTokens.insert(token) }

    func observeSend(to token: String, at now: Instant) -> [Invariant] {
        retiredTokens.contains(token) ? [.noPushToRetiredToken] : []
    }

    mutating func observeSilentAccepted(at now: Instant) -> [Invariant] {
        let seconds = now.secondsSinceEpoch
        silentAccepted.removeAll { seconds - $0 >= 3_600 }
        silentAccepted.append(seconds)
        return silentAccepted.count > RemoteChannel.silentPushes.perHour ? [.silentWithinBudget] : []
    }

    mutating func observeShown(_ id: FiringKey, on channel: DeliveryChannel, at now: Instant) -> [Invariant] {
        let seconds = now.secondsSinceEpoch
        if seconds >= nextTrimAt {
            nextTrimAt = seconds + 3 * .secondsPerDay
            shownOn.keep { seconds - $0.at < 7 * .secondsPerDay }
        }
        if let earlier = shownOn[id], earlier.channel != channel { return [.noOccurrenceOnTwoChannels] }
        shownOn[id] = (channel, seconds)
        return []
    }
}

/// What happened on one channel: handed over, accepted by APNs, retried, failed by reason,
/// tokens retired, shown on the device, and what the user did with it.
public struct ChannelFigures: Codable, Equatable, Sendable {
    /// Local: requests fired by the device; remote and silent: pushes handed to APNs (first
    /// attempts); Live Activity: commands the app performed itself and pushes handed to APNs;
    /// inbox: items added.
    public var sent = 0
    /// APNs answered 200.
    public var accepted = 0
    /// Further attempts after a 429 or 5xx.
    public var retries = 0
    /// Given up, by APNs' reason (after the bounded retries for 429 and 5xx), or `NoDevice`.
    public var failed: [String: Int] = [:]
    public var tokensRetired = 0
    /// Reached the device and shown (alerts) or applied (badge syncs).
    public var shown = 0
    public var opened = 0
    public var acted = 0

    mutating func merge(_ other: ChannelFigures) {
        sent += other.sent
        accepted += other.accepted
        retries += other.retries
        failed.merge(other.failed, uniquingKeysWith: +)
        tokensRetired += other.tokensRetired
        shown += other.shown
        opened += other.opened
        acted += other.acted
    }
}

/// `ChannelFigures` per channel, and what APNs dropped on the devices' side.
struct ChannelStats: Equatable {
    private var figures = [ChannelFigures](repeating: ChannelFigures(), count: DeliveryChannel.allCases.count)
    /// Pushes APNs accepted that never reached the device, by cause.
    var droppedByAPNs: [String: Int] = [:]

    subscript(channel: DeliveryChannel) -> ChannelFigures {
        get { figures[Self.position(of: channel)] }
        _modify { yield &figures[Self.position(of: channel)] }
    }

    /// The channel's place in `figures` (`DeliveryChannel.allCases` order), without a search.
    private static func position(of channel: DeliveryChannel) -> Int {
        switch channel {
        case .local: 0
        case .remote: 1
        case .silent: 2
        case .liveActivity: 3
        case .inbox: 4
        }
    }

    /// Channels with anything to show, by name.
    var report: [String: ChannelFigures] {
        var table: [String: ChannelFigures] = [:]
        for channel in DeliveryChannel.allCases where self[channel] != ChannelFigures() {
            table[channel.rawValue] = self[channel]
        }
        return table
    }

    mutating func addDrops<Note>(of device: SimulatedPushDevice<Note>) {
        for (cause, count) in [
            ("replacedWhileOffline", device.replacedWhileOffline), ("expiredWhileOffline", device.expiredWhileOffline),
            ("expiredBeforeArrival", device.expiredBeforeArrival),
            ("throttled", device.throttled), ("lostToUninstall", device.lostToUninstall),
        ] where count > 0 {
            droppedByAPNs[cause, default: 0] += count
        }
    }

    mutating func merge(_ other: ChannelStats) {
        for index in figures.indices { figures[index].merge(other.figures[index]) }
        droppedByAPNs.merge(other.droppedByAPNs, uniquingKeysWith: +)
    }
}

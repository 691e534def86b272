public import Delivery
public import Models

/// The conditions of Apple's push service in a simulated run: outages, 429 bursts, latency and
/// how late a dead token is reported. Every rate is 0 by default (a perfect service); the
/// scenario's `faults` set them.
public struct APNsConditions: Hashable, Sendable {
    /// Outages (every push answered 503 ServiceUnavailable) per week, each `outageMinutes` long.
    public var outagesPerWeek: Double = 0
    public var outageMinutes: Double = 20
    /// Bursts of 429 TooManyRequests per week, each `outageMinutes` long; during one, this share
    /// of attempts is refused.
    public var tooManyRequestsBurstsPerWeek: Double = 0
    public var tooManyRequestsShare: Double = 0.5
    /// Mean time from acceptance to the device, seconds (exponential).
    public var meanLatencySeconds: Double = 1
    /// Mean time from an uninstall to the first 410 Unregistered, hours (exponential): APNs
    /// learns of it from the device's next contact, not at once.
    public var unregisteredAfterHours: Double = 24

    public init() {}
}

/// Apple's push service as a simulated device meets it, following Apple's documentation
/// of its behaviour, not just its syntax:
/// - a malformed request is refused (`PushRequest.invalidReason`) before anything else;
/// - during an outage every attempt is answered 503, during a 429 burst a share of them 429;
///   outage and burst windows are a pure function of the seed and the hour, so every shard and
///   thread count sees the same ones;
/// - a token whose app was uninstalled is still accepted (200, never shown) until APNs learns of
///   the uninstall; after that every push gets 410 Unregistered with the uninstall's timestamp;
/// - an accepted push reaches the device after a latency; priority 5 waits for the device's next
///   power window (`lowPriorityWindowSeconds`) and arrives with the others of that window; a
///   background push beyond `backgroundPerHour` in an hour is throttled (never arrives);
/// - while the device is offline APNs stores only the latest push (of this one app), until its
///   `apns-expiration`; a "now or never" push (expiration 0) to an offline device is dropped;
/// - an alert with an expiration date that would arrive after it is discarded, as APNs tries
///   a push only until its expiration.
public struct SimulatedAPNs: Hashable, Sendable {
    public var conditions: APNsConditions
    public let seed: UInt64
    /// Priority 5 pushes arrive at the end of the device's current power window.
    public static let lowPriorityWindowSeconds: Int64 = 15 * 60
    /// Background pushes a device takes in any hour; beyond, APNs throttles (Apple: "two or three").
    public static let backgroundPerHour = 3

    public init(conditions: APNsConditions, seed: UInt64) {
        self.conditions = conditions
        self.seed = seed
    }

    /// APNs' answer to one attempt.
    public enum Answer: Hashable, Sendable {
        /// 200: accepted; the device gets it at `arrival` unless it is offline, throttled or gone.
        case accepted
        /// 410 Unregistered, with the instant from which the token is invalid.
        case unregistered(since: Instant)
        /// 503 ServiceUnavailable, 429 TooManyRequests: worth another attempt.
        case retryable(PushFailure)
        /// A malformed request (400, 413): the same request would get the same answer.
        case refused(PushFailure)
    }

    /// The answer to `request` sent to `device` at `now`; an accepted push joins the device's
    /// arrivals. `draws` gives the user's random numbers in 0..<1.
    public func send<Note>(
        _ request: PushRequest, carrying note: Note, to device: inout SimulatedPushDevice<Note>, at now: Instant,
        draws: inout SeededGenerator
    ) -> Answer {
        if let failure = request.invalidReason { return .refused(failure) }
        if isInWindow(now, ratePerWeek: conditions.outagesPerWeek, stream: 0x0A7A) {
            return .retryable(PushFailure(status: 503, reason: "ServiceUnavailable"))
        }
        if isInWindow(now, ratePerWeek: conditions.tooManyRequestsBurstsPerWeek, stream: 0x0429),
            draws.chance(conditions.tooManyRequestsShare)
        {
            return .retryable(PushFailure(status: 429, reason: "TooManyRequests"))
        }
        if let uninstalledAt = device.uninstalledAt, now >= device.unregisteredFrom ?? uninstalledAt {
            return .unregistered(since: uninstalledAt)
        }
        var arrival = now + Int64(draws.exponential(mean: conditions.meanLatencySeconds).rounded(.up))
        if request.priority != .immediate {
            let window = Self.lowPriorityWindowSeconds
            arrival = Instant(secondsSinceEpoch: (arrival.secondsSinceEpoch.floorDivided(by: window) + 1) * window)
        }
        let expiresAt: Instant? =
            switch request.expiration {
            case .nowOrNever: now
            case .at(let instant): instant
            case nil: now + 30 * .secondsPerDay
            }
        device.accept(request, note: note, arrival: arrival, expiresAt: expiresAt)
        return .accepted
    }

    /// Whether `instant` falls in one of the windows of a fault with `ratePerWeek`, each
    /// `outageMinutes` long (`FaultWindows`).
    func isInWindow(_ instant: Instant, ratePerWeek: Double, stream: UInt64) -> Bool {
        guard ratePerWeek > 0 else { return false }
        let windows = FaultWindows(
            ratePerWeek: ratePerWeek, lengthSeconds: Int64(max(1, conditions.outageMinutes) * 60), seed: seed,
            stream: stream)
        return windows.window(containing: instant) != nil
    }
}

/// One simulated device as APNs holds it: its token, whether it is online, the pushes on their
/// way to it, and the one push stored while it is offline. `Note` is what the app reads from a
/// push's payload, carried beside it so the simulator need not parse JSON.
public struct SimulatedPushDevice<Note: Sendable>: Sendable {
    /// A push on its way to the device.
    public struct Arrival: Sendable {
        public var request: PushRequest
        public var note: Note
        public var at: Instant
        public var expiresAt: Instant?
    }

    public let token: String
    /// When the app was uninstalled (nil: installed).
    public private(set) var uninstalledAt: Instant?
    /// When APNs starts answering 410 for this token.
    public private(set) var unregisteredFrom: Instant?
    /// The device's offline spells not yet over, in time order and apart from each other.
    public private(set) var offlineSpells: [Range<Instant>] = []
    /// Accepted pushes not yet at the device, in arrival order.
    public private(set) var inFlight: [Arrival] = []
    /// The latest push APNs stores while the device is offline.
    public private(set) var stored: Arrival?
    /// Arrival times of recent background pushes (for throttling).
    private var recentBackground: [Instant] = []
    /// Pushes APNs dropped: replaced by a later one while offline, expired while stored,
    /// throttled, or sent to an uninstalled app.
    public private(set) var replacedWhileOffline = 0
    public private(set) var expiredWhileOffline = 0
    /// Alerts whose expiration passed before their arrival, discarded by APNs.
    public private(set) var expiredBeforeArrival = 0
    public private(set) var throttled = 0
    public private(set) var lostToUninstall = 0

    public init(token: String) { self.token = token }

    /// The next instant something reaches the device (an arrival, or the stored push when it
    /// comes back online).
    public var nextArrival: Instant? {
        let flight = inFlight.isEmpty ? nil : inFlight[0].at  // the time only, not a copy of the push
        let back = stored == nil ? nil : offlineSpells.first?.upperBound
        switch (flight, back) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    mutating func accept(_ request: PushRequest, note: Note, arrival: Instant, expiresAt: Instant?) {
        let item = Arrival(request: request, note: note, at: arrival, expiresAt: expiresAt)
        let index = inFlight.firstIndex { $0.at > arrival } ?? inFlight.endIndex
        inFlight.insert(item, at: index)
    }

    /// The app is removed: pushes already on their way are lost, and APNs answers 410 from
    /// `unregisteredFrom` on.
    public mutating func uninstall(at instant: Instant, unregisteredFrom: Instant) {
        guard uninstalledAt == nil else { return }
        uninstalledAt = instant
        self.unregisteredFrom = max(instant, unregisteredFrom)
        lostToUninstall += inFlight.count + (stored == nil ? 0 : 1)
        inFlight = []
        stored = nil
    }

    /// The device loses its network from `from` until `until`; a spell that overlaps or touches
    /// another joins it.
    public mutating func goOffline(from: Instant, until: Instant) {
        guard from < until else { return }
        var spell = from..<until
        var kept: [Range<Instant>] = []
        for other in offlineSpells {
            if other.upperBound < spell.lowerBound || spell.upperBound < other.lowerBound {
                kept.append(other)
            } else {
                spell = min(other.lowerBound, spell.lowerBound)..<max(other.upperBound, spell.upperBound)
            }
        }
        kept.append(spell)
        offlineSpells = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Whether the device has no network at `instant`.
    public func isOffline(at instant: Instant) -> Bool {
        offlineSpells.contains { $0.contains(instant) }
    }

    /// When the device lost its network, if it has none at `instant`; nil when it has.
    public func offlineSince(at instant: Instant) -> Instant? {
        offlineSpells.first { $0.contains(instant) }?.lowerBound
    }

    /// When the network comes back, if the device has none at `instant`; nil when it has.
    public func onlineAgain(at instant: Instant) -> Instant? {
        offlineSpells.first { $0.contains(instant) }?.upperBound
    }

    /// What reaches the device through `now`, in arrival order. Arrivals while offline are
    /// stored (the latest replaces the one before; one already expired is dropped and replaces
    /// nothing); the stored push arrives when the device is back online, unless it expired first.
    public mutating func receive(through now: Instant) -> [Arrival] {
        var received: [Arrival] = []
        while let next = inFlight.first, next.at <= now {
            inFlight.removeFirst()
            comeBackOnline(through: next.at, into: &received)
            if next.request.pushType == .alert, case .at(let expiresAt) = next.request.expiration,
                expiresAt < next.at
            {
                // APNs tries a push only until its expiration: an alert that cannot reach the
                // device by then is discarded. (Only alerts are modelled so: a Live Activity
                // update held for a power window past its stale date still arrives here.)
                expiredBeforeArrival += 1
                continue
            }
            if isOffline(at: next.at) {
                if let expiresAt = next.expiresAt, expiresAt < next.at {
                    expiredWhileOffline += 1  // "now or never", or stale on arrival: never stored
                    continue
                }
                if stored != nil { replacedWhileOffline += 1 }
                stored = next
            } else {
                take(next, into: &received)
            }
        }
        comeBackOnline(through: now, into: &received)
        return received
    }

    /// Ends the offline spells over by `instant`, delivering the stored push at the moment the
    /// device came back, unless it expired first.
    private mutating func comeBackOnline(through instant: Instant, into received: inout [Arrival]) {
        while let spell = offlineSpells.first, spell.upperBound <= instant {
            offlineSpells.removeFirst()
            guard var item = stored else { continue }
            stored = nil
            if let expiresAt = item.expiresAt, expiresAt < spell.upperBound {
                expiredWhileOffline += 1
                continue
            }
            item.at = spell.upperBound
            take(item, into: &received)
        }
    }

    private mutating func take(_ item: Arrival, into received: inout [Arrival]) {
        if uninstalledAt != nil {
            lostToUninstall += 1
            return
        }
        if item.request.pushType == .background {
            recentBackground.removeAll { item.at - $0 >= 3_600 }
            guard recentBackground.count < SimulatedAPNs.backgroundPerHour else {
                throttled += 1
                return
            }
            recentBackground.append(item.at)
        }
        received.append(item)
    }
}

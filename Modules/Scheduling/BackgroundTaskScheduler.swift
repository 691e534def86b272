public import Models

/// The errors `BGTaskScheduler.submit(_:)` throws (BGTaskScheduler.Error.Code).
public enum BackgroundTaskError: Error, Equatable, Sendable {
    /// Background work is off for the app (the user switched Background App Refresh off).
    case unavailable
    /// Too many pending requests of that kind: at most 1 app refresh and 10 processing requests.
    case tooManyPendingTaskRequests
    /// The identifier is not listed under `BGTaskSchedulerPermittedIdentifiers`.
    case notPermitted(identifier: String)
}

/// The system's background task scheduler (BGTaskScheduler), as the engine uses it.
///
/// Contract, as on iOS:
/// - `submit` accepts only permitted identifiers (`notPermitted` otherwise) and throws
///   `unavailable` when background work is off for the app.
/// - At most 1 app refresh request and 10 processing requests are pending at once; a submit
///   beyond that throws `tooManyPendingTaskRequests` and changes nothing.
/// - Submitting an identifier that is already pending replaces that request, without error.
/// - `earliestBegin` is a lower bound, never a promise: the task may run much later, or never.
/// - `cancel(identifier:)` and `cancelAll()` remove pending requests; unknown identifiers are ignored.
/// - `pendingRequests` lists the pending requests in the order they were submitted.
public protocol BackgroundTaskScheduling {
    /// Submits `request` at the time `now`; replaces a pending request with the same identifier.
    mutating func submit(_ request: BackgroundTaskRequest, at now: Instant) throws(BackgroundTaskError)
    /// Removes the pending request with `identifier`, if any.
    mutating func cancel(identifier: String)
    /// Removes every pending request.
    mutating func cancelAll()
    /// The pending requests, in submission order.
    var pendingRequests: [BackgroundTaskRequest] { get }
}

/// How the simulated system treats background task requests; all values come from the scenario.
///
/// Decoding: every key is optional and falls back to its `standard` value; unknown keys and
/// out-of-range values are rejected with the offending field in the error's coding path.
public struct BackgroundLaunchModel: Hashable, Sendable {
    /// Launches come after `max(submit time, earliestBegin)` by an exponential delay with this
    /// mean, in seconds (at least 0).
    public var meanDelaySeconds: Double
    /// Probability (0...1) that a submitted request is never launched.
    public var neverRunProbability: Double
    /// Probability (0...1) that the expiration handler comes before the full budget.
    public var earlyExpirationProbability: Double
    /// Run time of an app refresh task, in seconds (about 30 s on iOS).
    public var refreshBudgetSeconds: Double
    /// Run time of a processing task, in seconds (processing tasks get minutes).
    public var processingBudgetSeconds: Double

    public init(
        meanDelaySeconds: Double = 1_800, neverRunProbability: Double = 0.05, earlyExpirationProbability: Double = 0.05,
        refreshBudgetSeconds: Double = 30, processingBudgetSeconds: Double = 300
    ) {
        self.meanDelaySeconds = meanDelaySeconds
        self.neverRunProbability = neverRunProbability
        self.earlyExpirationProbability = earlyExpirationProbability
        self.refreshBudgetSeconds = refreshBudgetSeconds
        self.processingBudgetSeconds = processingBudgetSeconds
    }

    /// The defaults: launches about 30 min after they are allowed, 5 % never run, 5 % expire early,
    /// 30 s for app refresh and 5 min for processing.
    public static let standard = BackgroundLaunchModel()

    /// The full run time of a task of `kind`.
    public func budgetSeconds(for kind: BackgroundTaskKind) -> Double {
        switch kind {
        case .appRefresh: refreshBudgetSeconds
        case .processing: processingBudgetSeconds
        }
    }

    /// Why the model is invalid, as (field, problem), or nil when it is valid.
    public var invalidField: (field: String, problem: String)? {
        func probability(_ value: Double) -> Bool { value.isFinite && (0...1).contains(value) }
        if !(meanDelaySeconds.isFinite && meanDelaySeconds >= 0) {
            return ("meanDelaySeconds", "must be a finite number >= 0, got \(meanDelaySeconds)")
        }
        if !probability(neverRunProbability) {
            return ("neverRunProbability", "must be in 0...1, got \(neverRunProbability)")
        }
        if !probability(earlyExpirationProbability) {
            return ("earlyExpirationProbability", "must be in 0...1, got \(earlyExpirationProbability)")
        }
        if !(refreshBudgetSeconds.isFinite && refreshBudgetSeconds > 0) {
            return ("refreshBudgetSeconds", "must be a finite number > 0, got \(refreshBudgetSeconds)")
        }
        if !(processingBudgetSeconds.isFinite && processingBudgetSeconds > 0) {
            return ("processingBudgetSeconds", "must be a finite number > 0, got \(processingBudgetSeconds)")
        }
        return nil
    }
}

extension BackgroundLaunchModel: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case meanDelaySeconds, neverRunProbability, earlyExpirationProbability, refreshBudgetSeconds
        case processingBudgetSeconds
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let allowed = Set(CodingKeys.allCases.map(\.stringValue))
        let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted()
        if let unknown = keys.first(where: { !allowed.contains($0) }) {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath + [AnyKey(stringValue: unknown)],
                    debugDescription:
                        "unknown key \"\(unknown)\"; expected one of \(allowed.sorted().joined(separator: ", "))"
                ))
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self = .standard
        func value(_ key: CodingKeys, _ field: inout Double) throws {
            if let decoded = try c.decodeIfPresent(Double.self, forKey: key) { field = decoded }
        }
        try value(.meanDelaySeconds, &meanDelaySeconds)
        try value(.neverRunProbability, &neverRunProbability)
        try value(.earlyExpirationProbability, &earlyExpirationProbability)
        try value(.refreshBudgetSeconds, &refreshBudgetSeconds)
        try value(.processingBudgetSeconds, &processingBudgetSeconds)
        if let invalid = invalidField {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath + [AnyKey(stringValue: invalid.field)],
                    debugDescription: invalid.problem))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(meanDelaySeconds, forKey: .meanDelaySeconds)
        try c.encode(neverRunProbability, forKey: .neverRunProbability)
        try c.encode(earlyExpirationProbability, forKey: .earlyExpirationProbability)
        try c.encode(refreshBudgetSeconds, forKey: .refreshBudgetSeconds)
        try c.encode(processingBudgetSeconds, forKey: .processingBudgetSeconds)
    }
}

/// The system launching the app in the background to run one task (BGTask handed to the handler).
public struct BackgroundLaunch: Hashable, Sendable {
    public var request: BackgroundTaskRequest
    /// When the task starts.
    public var launchedAt: Instant
    /// Seconds from `launchedAt` until the expiration handler fires; at most the kind's budget,
    /// less when the system cuts the task short. The task must finish before then.
    public var timeAllowedSeconds: Double

    public init(request: BackgroundTaskRequest, launchedAt: Instant, timeAllowedSeconds: Double) {
        self.request = request
        self.launchedAt = launchedAt
        self.timeAllowedSeconds = timeAllowedSeconds
    }

    /// The instant the expiration handler fires (rounded down to the second).
    public var expiresAt: Instant { launchedAt + Int64(timeAllowedSeconds.rounded(.down)) }
}

/// BGTaskScheduler with the real framework's limits and errors, driven by virtual time.
///
/// Contract (beyond `BackgroundTaskScheduling`):
/// - Everything random is decided at submit time from the injected generator, with a fixed
///   number of draws per submit: whether the request ever runs (`neverRunProbability`), its
///   planned launch, `max(now, earliestBegin ?? now)` plus an exponential delay with mean
///   `meanDelaySeconds` (whole seconds, rounded down), and the time allowed (the kind's budget,
///   or with `earlyExpirationProbability` a uniform fraction 0.2 ..< 1 of it). The same seed and
///   the same calls give the same launches.
/// - The app is *suspended* while `isTerminatedByUser` is true or `isBackgroundRefreshEnabled`
///   is false: nothing launches, requests stay pending and `nextLaunchInstant` is nil. When the
///   suspension ends, the first later call that carries a time (`submit` or `launchDue`) treats
///   it as the moment the app may run again: every request whose planned launch fell before it
///   is re-planned from then with a fresh exponential delay (the launch was missed, not lost).
/// - `launchDue(through:)` hands out each launch exactly once and removes the request.
/// - The requests' network and power requirements are not modelled.
public struct SimulatedBackgroundTaskScheduler: BackgroundTaskScheduling, Sendable {
    /// At most this many app refresh requests are pending (BGAppRefreshTaskRequest).
    public static let maxPendingAppRefresh = 1
    /// At most this many processing requests are pending (BGProcessingTaskRequest).
    public static let maxPendingProcessing = 10

    /// The identifiers listed under `BGTaskSchedulerPermittedIdentifiers`.
    public let permittedIdentifiers: Set<String>
    public let model: BackgroundLaunchModel
    /// The generator all draws come from; advances with every submit and resume.
    public private(set) var generator: SeededGenerator

    /// Background App Refresh for the app; when false `submit` throws `unavailable` and nothing launches.
    public var isBackgroundRefreshEnabled: Bool = true {
        didSet { noteSuspension(wasSuspended: !oldValue || isTerminatedByUser) }
    }

    /// The user force-quit the app: nothing launches until the app runs again (set it back to false).
    public var isTerminatedByUser: Bool = false {
        didSet { noteSuspension(wasSuspended: oldValue || !isBackgroundRefreshEnabled) }
    }

    /// One pending request with what the system decided for it at submit time.
    struct Entry: Hashable, Sendable {
        var request: BackgroundTaskRequest
        /// nil when the system will never launch it.
        var plannedLaunch: Instant?
        var timeAllowedSeconds: Double
    }

    /// Pending requests in submission order (at most 11, so linear search is the fastest).
    private(set) var entries: [Entry] = []
    /// Set when a suspension ended; cleared by the next call that carries a time.
    private var resumePending = false

    public init(
        permittedIdentifiers: Set<String>, model: BackgroundLaunchModel = .standard, generator: SeededGenerator
    ) {
        self.permittedIdentifiers = permittedIdentifiers
        self.model = model
        self.generator = generator
    }

    /// True while nothing can launch (force-quit, or Background App Refresh off).
    public var isSuspended: Bool { isTerminatedByUser || !isBackgroundRefreshEnabled }

    public var pendingRequests: [BackgroundTaskRequest] { entries.map(\.request) }

    /// The soonest planned launch of a pending request that will run; nil when none will, or
    /// while suspended. Can lie before the current time right after a suspension ends, until
    /// the next `launchDue` re-plans the missed launches.
    public var nextLaunchInstant: Instant? {
        guard !isSuspended else { return nil }
        return entries.lazy.compactMap(\.plannedLaunch).min()
    }

    /// The planned launch of the pending request `identifier`; nil when it is not pending or
    /// will never run.
    public func plannedLaunch(for identifier: String) -> Instant? {
        entries.first { $0.request.identifier == identifier }?.plannedLaunch
    }

    public mutating func submit(_ request: BackgroundTaskRequest, at now: Instant) throws(BackgroundTaskError) {
        guard isBackgroundRefreshEnabled else { throw .unavailable }
        guard permittedIdentifiers.contains(request.identifier) else {
            throw .notPermitted(identifier: request.identifier)
        }
        let sameKind = entries.count(where: {
            $0.request.kind == request.kind && $0.request.identifier != request.identifier
        })
        let limit =
            request.kind == .appRefresh
            ? SimulatedBackgroundTaskScheduler.maxPendingAppRefresh
            : SimulatedBackgroundTaskScheduler.maxPendingProcessing
        guard sameKind < limit else { throw .tooManyPendingTaskRequests }

        resumeIfNeeded(at: now)
        // Always four draws, whatever the outcomes, so later submits see the same stream.
        let neverRuns = generator.chance(model.neverRunProbability)
        let delay = generator.exponential(mean: model.meanDelaySeconds)
        let expiresEarly = generator.chance(model.earlyExpirationProbability)
        let fraction = 0.2 + 0.8 * generator.nextUnit()

        let base = max(now, request.earliestBegin ?? now)
        let budget = model.budgetSeconds(for: request.kind)
        let entry = Entry(
            request: request, plannedLaunch: neverRuns ? nil : base + SimulatedBackgroundTaskScheduler.seconds(delay),
            timeAllowedSeconds: expiresEarly ? budget * fraction : budget)
        entries.removeAll { $0.request.identifier == request.identifier }
        entries.append(entry)
    }

    public mutating func cancel(identifier: String) {
        entries.removeAll { $0.request.identifier == identifier }
    }

    public mutating func cancelAll() {
        entries.removeAll()
    }

    /// Launches every request whose planned launch is <= `now`, in (launch time, identifier)
    /// order, removing them from pending. Each launch happens once. Returns nothing while suspended.
    public mutating func launchDue(through now: Instant) -> [BackgroundLaunch] {
        guard !isSuspended else { return [] }
        resumeIfNeeded(at: now)
        var due: [BackgroundLaunch] = []
        entries.removeAll { entry in
            guard let planned = entry.plannedLaunch, planned <= now else { return false }
            due.append(
                BackgroundLaunch(
                    request: entry.request, launchedAt: planned, timeAllowedSeconds: entry.timeAllowedSeconds))
            return true
        }
        due.sort { ($0.launchedAt, $0.request.identifier) < ($1.launchedAt, $1.request.identifier) }
        return due
    }

    // MARK: - Suspension

    private mutating func noteSuspension(wasSuspended: Bool) {
        if wasSuspended && !isSuspended { resumePending = true }
        if isSuspended { resumePending = false }
    }

    /// After a suspension: launches planned before `now` were missed; plan them again from `now`.
    private mutating func resumeIfNeeded(at now: Instant) {
        guard resumePending, !isSuspended else { return }
        resumePending = false
        for index in entries.indices {
            guard let planned = entries[index].plannedLaunch, planned < now else { continue }
            let delay = generator.exponential(mean: model.meanDelaySeconds)
            entries[index].plannedLaunch = now + SimulatedBackgroundTaskScheduler.seconds(delay)
        }
    }

    /// Whole seconds of a non-negative delay, rounded down (and capped at ten years).
    private static func seconds(_ delay: Double) -> Int64 {
        guard delay.isFinite, delay > 0 else { return delay > 0 ? 10 * 366 * .secondsPerDay : 0 }
        return Int64(min(delay, Double(10 * 366 * Int64.secondsPerDay)).rounded(.down))
    }
}

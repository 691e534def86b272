public import Models

/// The two kinds of background task iOS offers (BGAppRefreshTaskRequest, BGProcessingTaskRequest).
public enum BackgroundTaskKind: String, Codable, Sendable, CaseIterable {
    /// About 30 s of run time; at most one pending request per app.
    case appRefresh
    /// Minutes of run time while the device is idle; at most ten pending requests per app.
    case processing
}

/// The background jobs of the engine, with the identifiers an app lists under
/// `BGTaskSchedulerPermittedIdentifiers`, spelled as the apps that use them register them.
public enum BackgroundJob: String, Codable, Sendable, CaseIterable {
    /// Lapse detection, every 24 h.
    case lapseDetection = "com.airfit.lapseDetection"
    /// Engagement analysis, every 72 h.
    case engagementAnalysis = "com.airfit.engagementAnalysis"
    /// Workout pattern analysis at 03:00 local.
    case patternAnalysis = "com.trainer.patternAnalysis"

    public var kind: BackgroundTaskKind {
        switch self {
        case .lapseDetection: .appRefresh
        case .engagementAnalysis, .patternAnalysis: .processing
        }
    }
}

/// A request to run a background task no earlier than `earliestBegin`.
public struct BackgroundTaskRequest: Codable, Hashable, Sendable {
    public var identifier: String
    public var kind: BackgroundTaskKind
    /// A lower bound, never a promise: the system may run the task much later, or never.
    public var earliestBegin: Instant?
    public var requiresNetworkConnectivity: Bool
    public var requiresExternalPower: Bool

    public init(
        identifier: String, kind: BackgroundTaskKind, earliestBegin: Instant?,
        requiresNetworkConnectivity: Bool = false,
        requiresExternalPower: Bool = false
    ) {
        self.identifier = identifier
        self.kind = kind
        self.earliestBegin = earliestBegin
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.requiresExternalPower = requiresExternalPower
    }

    public init(job: BackgroundJob, earliestBegin: Instant?) {
        self.init(identifier: job.rawValue, kind: job.kind, earliestBegin: earliestBegin)
    }

    /// The engine's job this task runs; nil for an identifier that names none.
    public var job: BackgroundJob? { BackgroundJob(rawValue: identifier) }
}

public import Engagement
import LiveActivity
public import Models
import Scheduling
public import Storage

/// The trace a step adds (`TraceStore`): one record per traced decision, with the input that
/// caused it. Next to the ledger mapping, so both read the same `.trace` effects.
extension StepRecords {
    public static func traceRecords(for input: EngineInput?, effects: [Effect], userID: UserID) -> [TraceRecord] {
        let inputName = inputName(input)
        return effects.compactMap { effect in
            guard case .trace(let entry) = effect else { return nil }
            return TraceRecord(
                userID: userID, at: entry.at, requestID: RequestID(entry.requestID), kind: entry.kind,
                decision: entry.decision,
                reason: entry.reason, fireAt: entry.fireAt, detail: entry.detail, groupID: entry.groupID,
                input: inputName)
        }
    }

    /// A short, stable name of an input for the trace: the event type of the API for what a user
    /// did (`appOpened`, `notificationResponse`, `socialEvent`), the job of a background run
    /// (`backgroundTask:com.airfit.lapseDetection`), and `userUpdated` for a step without an
    /// input of its own (the runtime applying a changed user: zone, preferences, profile).
    public static func inputName(_ input: EngineInput?) -> String {
        switch input {
        case nil: "userUpdated"
        case .appLaunched: "appLaunched"
        case .activity(let activity, _): activity.name
        case .notificationResponse, .unrecognizedResponse: "notificationResponse"
        case .backgroundTaskLaunched(let job): "backgroundTask:\(job.rawValue)"
        case .preferencesChanged: "preferencesChanged"
        case .profileChanged: "profileChanged"
        case .timeZoneChanged: "timeZoneChanged"
        case .socialEvent: "socialEvent"
        case .contentGenerated: "contentGenerated"
        case .liveActivity(let event): event.name
        case .notificationPermission: "notificationPermission"
        case .syncMissed: "syncMissed"
        }
    }
}

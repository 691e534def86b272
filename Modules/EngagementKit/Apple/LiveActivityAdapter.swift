// The kit over Apple's ActivityKit. This file is compiled on iOS only (ActivityKit's activities
// are unavailable on Mac Catalyst and macOS); on Linux its syntax is checked (`swiftc -parse` in
// CI), and the event it sends is `AppEvent`'s, tested here.
#if canImport(ActivityKit) && os(iOS) && !targetEnvironment(macCatalyst)
    public import ActivityKit
    public import Foundation
    public import LiveActivity
    public import Models

    /// Reports each push token ActivityKit gives a Live Activity the engine named, so the server
    /// pushes the activity's updates and end to it (`apns-push-type: liveactivity`).
    public enum LiveActivityTokens {
        /// Follows `activity`'s push tokens until it ends or is dismissed, enqueueing each under
        /// `activityID`, the engine's name of the activity (the `start` in the answer to the event
        /// that began it, `FlushReport.liveActivities`). A token the system replaces is reported
        /// again; the queue sends them in order. The activity must have been requested with
        /// `pushType: .token`, or it has no tokens to report.
        public static func report<Attributes: ActivityAttributes>(
            _ activity: Activity<Attributes>, as activityID: String, into queue: EventQueue,
            now: @escaping @Sendable () -> Instant
        ) async {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await token in activity.pushTokenUpdates {
                        let event = AppEvent.liveActivity(
                            .pushTokenReceived(activityID: activityID, token: DeviceReporter.hex(token)))
                        // A queue that cannot write (a full disk) loses this token; the next one is tried.
                        _ = try? await queue.enqueue(event, at: now())
                    }
                }
                group.addTask {
                    // The token stream is not promised to finish with the activity: this one is.
                    for await state in activity.activityStateUpdates where state == .ended || state == .dismissed {
                        return
                    }
                }
                await group.next()
                group.cancelAll()
            }
        }
    }
#endif

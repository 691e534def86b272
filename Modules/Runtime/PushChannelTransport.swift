public import Delivery
import Models
public import Scheduling
public import Storage

/// Told of each step of a send, for a shell's metrics and logs; nothing it does changes the send.
public protocol SendObserver: Sendable {
    /// A request of `row` is about to go to one target.
    func sending(_ row: OutboxRow, on channel: DeliveryChannel)
    /// One target's final outcome (after the transport's retries), and what became of its
    /// device when the outcome retired the token (nil when it retired nothing).
    func answered(
        _ row: OutboxRow, on channel: DeliveryChannel, outcome: PushOutcome, retirement: DeviceRetirement?)
    /// The row is done without a send: withheld by the send rules, or refused as unreadable.
    func notSent(_ row: OutboxRow, on channel: DeliveryChannel, report: SendReport)
}

/// What became of a device whose token APNs retired.
public enum DeviceRetirement: Sendable {
    /// Removed from the user's devices.
    case removed
    /// Kept: the token was registered again after the 410's timestamp.
    case registeredAgainSince
    /// The store could not remove it; the next send's answer tries again.
    case failed(RuntimeError)
}

/// Observes nothing.
public struct IgnoringSendObserver: SendObserver {
    public init() {}
    public func sending(_ row: OutboxRow, on channel: DeliveryChannel) {}
    public func answered(
        _ row: OutboxRow, on channel: DeliveryChannel, outcome: PushOutcome, retirement: DeviceRetirement?
    ) {}
    public func notSent(_ row: OutboxRow, on channel: DeliveryChannel, report: SendReport) {}
}

/// Sends the outbox's APNs rows through `push` (the APNs client, with its bounded retries), as
/// `RowSends` decides them, each to every device of its user with the row's key as `apns-id`:
/// - a `push` row: its notification as an alert carrying the inbox's unread count as badge,
///   withheld inside the user's quiet hours; when the send took time (the client retried), the
///   count is read again, and an alert that carried an older one is reported
///   `acceptedWithOutdatedBadge` (a badge sync follows);
/// - a `silent` row: a badge and inbox sync with the counts and the local plan's version of
///   the moment (`PushSends.sync`);
/// - a `liveActivity` row: an update or an end to the activity's own token.
///
/// A retired token's device is removed, unless it was registered again since the 410. A user
/// removed meanwhile has no device: the row is reported accepted. A store failure throws: the
/// row stays pending and is sent again under the same `apns-id`.
public struct PushChannelTransport: ChannelTransport {
    let runtime: EngineRuntime
    let push: any PushTransport
    /// The app's bundle id.
    let topic: String
    /// Told of each step of each send.
    public let observer: any SendObserver

    public init(runtime: EngineRuntime, push: any PushTransport, topic: String, observer: any SendObserver) {
        self.runtime = runtime
        self.push = push
        self.topic = topic
        self.observer = observer
    }

    @discardableResult
    public func perform(_ row: OutboxRow) async throws -> SendReport {
        let channel = RowSends.channel(of: row)
        let preparedAt = runtime.now()
        let prepared: RowSend
        // A user removed meanwhile has no device; a store failure throws (the row stays pending).
        do { prepared = try await prepare(row) } catch {
            guard case .unknownUser = error else { throw error }
            return .accepted
        }
        switch prepared {
        case .notSent(let report):
            observer.notSent(row, on: channel, report: report)
            return report
        case .push(let push):
            let outcomes = await send(push, of: row, on: channel)
            // Read again only when the clock moved since the count was read (the client
            // retried). A failed read asks for no sync: the store that failed it would also
            // refuse the sync's commit, and the next change asks again.
            let unreadNow =
                push.carriedBadge != nil && runtime.now() > preparedAt
                ? try? await runtime.inboxCounts(of: row.userID).badge : nil
            return RowSends.report(push, outcomes: outcomes, unreadNow: unreadNow)
        }
    }

    /// The row's push, from what the store holds of its user now: only the facts its work reads.
    private func prepare(_ row: OutboxRow) async throws(RuntimeError) -> RowSend {
        let work = RowSends.work(for: row)
        if case .done(let report) = work { return .notSent(report) }
        let reads = work.reads
        var facts = SendFacts(devices: try await runtime.devices(of: row.userID))
        if reads.contains(.counts) { facts.counts = try await runtime.inboxCounts(of: row.userID) }
        if reads.contains(.planVersion) { facts.planVersion = try await runtime.localPlanVersion(of: row.userID) }
        if reads.contains(.rules) { facts.rules = try await runtime.showingRules(of: row.userID) }
        return RowSends.prepare(
            work, of: row, facts: facts, silentPushes: runtime.silentPushes, topic: topic, at: runtime.now())
    }

    /// Sends each target's request at once; returns the outcomes, one per target.
    private func send(_ push: RowPush, of row: OutboxRow, on channel: DeliveryChannel) async -> [PushOutcome] {
        await withTaskGroup(of: PushOutcome.self) { group in
            for target in push.targets {
                group.addTask {
                    observer.sending(row, on: channel)
                    let outcome = await self.push.send(target.request)
                    let retirement: DeviceRetirement? =
                        switch outcome {
                        case .tokenRetired: await retire(target, after: outcome)
                        default: nil
                        }
                    observer.answered(row, on: channel, outcome: outcome, retirement: retirement)
                    return outcome
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Removes the target's device when the answer retires it (`RowSends.retires`).
    private func retire(_ target: RowPush.Target, after outcome: PushOutcome) async -> DeviceRetirement? {
        guard let device = target.device else { return nil }
        guard RowSends.retires(target, after: outcome) else { return .registeredAgainSince }
        do {
            try await runtime.removeDevice(token: device.token)
            return .removed
        } catch {
            return .failed(error)
        }
    }
}

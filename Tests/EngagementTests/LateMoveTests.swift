import Models
import Scheduling
import TestSupport
import Testing

@testable import Engagement

/// A move the server hears of late (`EngineInput.timeZoneChanged(_:movedAt:)`): the phone was
/// offline when it moved, and fired what it held at its wall time in the new zone meanwhile.
@Suite("A move heard of late")
struct LateMoveTests {
    let t0 = instant("2027-03-01T07:00:00Z")
    let london = ZoneRules(identifier: "Europe/London")!
    let newYork = ZoneRules(identifier: "America/New_York")!

    /// A server's engine in London whose phone pulled the plan at `t0`, and the first one-off
    /// local request it holds on a calendar trigger.
    func served() -> (UserEngine, PlannedNotification) {
        var engine = engineWithPulledPlan(in: london, at: t0)
        let local = engine.planned.filter { ChannelPolicy.channel(for: $0.kind) == .local }
        let held = local.first { !$0.repeatsDaily && TriggerChoice.usesCalendarTrigger($0.fireAt, in: london) }!
        return (engine, held)
    }

    /// The instant the phone fires `item` after moving to New York: the same wall time there.
    func firedInNewYork(_ item: PlannedNotification) -> Instant {
        newYork.instant(for: london.localDateTime(at: item.fireAt))
    }

    @Test func whatThePhoneFiredAfterMovingIsHistoryNotSentAgain() {
        var (engine, held) = served()
        let firedAt = firedInNewYork(held)
        let heardAt = firedAt + 600
        let effects = engine.handle(.timeZoneChanged(newYork, movedAt: t0 + 60), at: heardAt, phone: .atOnce)
        #expect(engine.state.plan.fired[held.id] == firedAt)
        #expect(!engine.planned.contains { $0.id == held.id })
        #expect(engine.state.plan.ledger.instants.contains(firedAt.secondsSinceEpoch))
        // Out of the server's copy of the plan, and never scheduled again.
        #expect(
            effects.contains {
                if case .cancel(let ids) = $0 { ids.contains(held.id.requestID) } else { false }
            })
        #expect(
            !effects.contains {
                if case .schedule(let request, _, _) = $0 {
                    request.identifier == held.id.requestID
                } else {
                    false
                }
            })
    }

    @Test func heardAtOnceTheSameMoveFiresNothingOnThePhone() {
        // The server hears as the phone moves: what has passed in the new zone is the device's
        // to drop, and the engine plans it again (within its deadline) rather than count it sent.
        var (engine, held) = served()
        let heardAt = firedInNewYork(held) + 600
        _ = engine.handle(.timeZoneChanged(newYork), at: heardAt, phone: .atOnce)
        #expect(engine.state.plan.fired[held.id] != firedInNewYork(held))
    }

    @Test func aMoveAfterTheWallTimePassedThereFiresNothing() {
        // The phone moved after the wall time had passed in New York: it dropped the request.
        var (engine, held) = served()
        let firedAt = firedInNewYork(held)
        _ = engine.handle(.timeZoneChanged(newYork, movedAt: firedAt + 1), at: firedAt + 600, phone: .atOnce)
        #expect(engine.state.plan.fired[held.id] != firedAt)
    }

    @Test func aMoveReportedBeforeTheWallTimeComesFiresNothingYet() {
        // The server hears before the phone's new wall time comes, but after the old one passed:
        // the request is re-timed, not fired, and written again (the server's copy took it as due).
        var (engine, held) = served()
        let firedAt = firedInNewYork(held)
        #expect(held.fireAt < firedAt - 60)
        let effects = engine.handle(.timeZoneChanged(newYork, movedAt: t0 + 60), at: firedAt - 60, phone: .atOnce)
        #expect(engine.state.plan.fired[held.id] == nil)
        #expect(engine.planned.contains { $0.id == held.id && $0.fireAt == firedAt })
        #expect(
            effects.contains {
                if case .schedule(let request, let at, _) = $0 {
                    request.identifier == held.id.requestID && at == firedAt
                } else {
                    false
                }
            })
    }
}

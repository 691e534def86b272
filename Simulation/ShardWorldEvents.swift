import Delivery
import Models
import Scheduling

/// The world events a user's own timeline puts in the shard's queue: the next local day, the
/// next trip, the device's next notification firing and its next background launch. Each is
/// pushed once for its time; a superseded one is skipped when it comes due.
extension Shard {
    func scheduleNextDay(_ local: Int, after now: Instant) {
        let zone = users[local].zone
        let tomorrow = zone.localDate(at: now).adding(days: 1)
        let midnight = zone.instant(for: LocalDateTime(date: tomorrow, secondOfDay: 0))
        users[local].dayStartAt = midnight.secondsSinceEpoch
        queue.push(time: midnight.secondsSinceEpoch, user: Int32(local), kind: .dayStart)
    }

    func scheduleTravel(_ local: Int, after now: Instant) {
        let seconds = Behaviour.secondsUntilNextTrip(
            ratePerDay: scenario.faults.travelPerTravellerDay, generator: &users[local].generator)
        queue.push(time: now.secondsSinceEpoch + seconds, user: Int32(local), kind: .travel)
    }

    /// The next fire event, at the true time the device's clock reaches its next trigger.
    func rescheduleFire(_ local: Int) {
        guard let trigger = inPlace(local, { $0.center.nextFireInstant?.secondsSinceEpoch }) else { return }
        let next = trigger - users[local].clockOffsetSeconds
        if users[local].fireEventAt == next { return }
        users[local].fireEventAt = next
        queue.push(time: next, user: Int32(local), kind: .fire)
    }

    func rescheduleLaunch(_ local: Int) {
        guard let next = inPlace(local, { $0.background.nextLaunchInstant?.secondsSinceEpoch }) else { return }
        if users[local].launchEventAt == next { return }
        users[local].launchEventAt = next
        queue.push(time: next, user: Int32(local), kind: .launch)
    }
}

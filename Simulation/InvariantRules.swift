import Content
import Models
import Scheduling

/// The checker's rules that read no state of its own: a slot's nominal time and a payload's size
/// and privacy.
extension InvariantChecker {
    /// The nominal local time of an occurrence's slot, rebuilt from its identifier and the
    /// preferences (`SlotWindow.nominalMinute`, the table of slots, not the engine's plan); nil
    /// for a snoozed copy or a kind without a wall-clock slot. A daily series' day is the day it
    /// fired.
    static func nominal(
        of id: OccurrenceID, deliveredAt local: LocalDateTime, preferences: NotificationPreferences
    ) -> LocalDateTime? {
        guard id.snooze == 0 else { return nil }
        guard let minute = SlotWindow.nominalMinute(of: id, preferences: preferences) else { return nil }
        let day = id.isDailySeries ? local.daysSinceEpoch : Int64(id.day)
        return LocalDateTime(localSeconds: day * .secondsPerDay + Int64(minute) * .secondsPerMinute)
    }

    /// Checks one delivered payload: within APNs' 4 KB, and free of personal data the recipient's
    /// privacy level forbids. Returns its size and the broken invariants with their detail.
    static func checkPayload(
        _ content: NotificationContent, id: String, recipient: Recipient
    ) -> (bytes: Int, broken: [(Invariant, String)]) {
        var broken: [(Invariant, String)] = []
        let bytes = PayloadBuilder.byteCount(of: content)
        if bytes > PayloadBuilder.maxBytes {
            broken.append((.payloadWithin4KB, "\(id) \(bytes) bytes"))
        }
        if let leak = PrivacyAudit.violations(in: content, for: recipient).first {
            broken.append((.noPersonalDataInPayload, "\(id) \(leak)"))
        }
        return (bytes, broken)
    }
}

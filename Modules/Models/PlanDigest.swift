/// A digest of a local plan's requests that the server and EngagementKit compute alike, from the
/// values the plan's wire form carries: the server sends it with every plan it answers, whole or
/// a delta (`digest`), and the kit checks the plan it merged from a delta against it, so a delta
/// made against another base than the one the phone holds is never taken.
///
/// Each request is hashed on its own (`hash`: FNV-1a over its identifier, its content as the
/// wire carries it, its trigger, what withdraws it, and a one-off's next firing, which may be
/// later than its trigger says), and the digest of a plan is the wrapping sum of those hashes,
/// so the order of the requests does not matter (a daily series' next firing moves as it fires;
/// it is not hashed). Stable across processes and builds: the same request always hashes the
/// same, which is what lets the server keep these hashes to answer deltas (`ServedPlans`).
public enum PlanDigest {
    /// The hash of one request of a plan.
    public static func hash(_ request: NotificationRequest, nextFireAt: Instant, withdrawnBy: [Withdrawal]) -> UInt64 {
        var hashing = Hashing()
        let content = request.content
        hashing.add(request.identifier.rawValue)
        hashing.add(content.kind.rawValue)
        hashing.add(content.title)
        hashing.add(content.subtitle)
        hashing.add(content.body)
        hashing.add(content.category.rawValue)
        hashing.add(content.threadID)
        hashing.add(content.interruptionLevel.rawValue)
        hashing.add(Int64(bitPattern: content.relevanceScore.bitPattern))
        hashing.add(content.sound?.rawValue)
        hashing.add(content.deepLink)
        switch request.trigger {
        case .date(let instant):
            hashing.add("date")
            hashing.add(instant.secondsSinceEpoch)
        case .calendar(let match, let repeats):
            hashing.add(repeats ? "calendar.repeats" : "calendar")
            for field in [match.year, match.month, match.day, match.weekday?.rawValue, match.hour, match.minute] {
                hashing.add(field.map(Int64.init) ?? -1)
            }
        case .timeInterval(let seconds, let repeats):
            hashing.add(repeats ? "timeInterval.repeats" : "timeInterval")
            hashing.add(seconds)
        }
        if !request.trigger.repeats { hashing.add(nextFireAt.secondsSinceEpoch) }
        for withdrawal in withdrawnBy {
            hashing.add(withdrawal.activity.name)
            hashing.add(withdrawal.activity.meal?.rawValue)
            hashing.add(withdrawal.from.secondsSinceEpoch)
            hashing.add(withdrawal.until?.secondsSinceEpoch ?? -1)
        }
        return hashing.value
    }

    /// The digest of a plan whose requests hash to `hashes`, in any order: 16 lowercase
    /// hexadecimal digits.
    public static func of(_ hashes: some Sequence<UInt64>) -> String {
        let sum = hashes.reduce(0, &+)
        let digits = String(sum, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// FNV-1a over fields, each followed by a separator byte, absent text by a byte of its own.
    struct Hashing {
        var value = FNV1a.offsetBasis

        mutating func add(_ text: String?) {
            if let text {
                value = FNV1a.hash(text, basis: value)
            } else {
                mix(0x00)
            }
            mix(0x1F)
        }

        /// A deep link as its URL (`DeepLink.description`), the meal's link hashed in its pieces
        /// rather than joined into a new string.
        mutating func add(_ link: DeepLink) {
            guard case .mealLog(let meal?) = link else { return add(link.description) }
            value = FNV1a.hash(DeepLink.mealLog(nil).description, basis: value)
            value = FNV1a.hash("/", basis: value)
            add(meal.rawValue)
        }

        mutating func add(_ number: Int64) {
            withUnsafeBytes(of: number.littleEndian) { value = FNV1a.hash(bytes: $0, basis: value) }
            mix(0x1F)
        }

        private mutating func mix(_ byte: UInt8) {
            value ^= UInt64(byte)
            value &*= FNV1a.prime
        }
    }
}

import Foundation
import Models

/// How simulated users tire of notifications (the scenario's `fatigue` object; every key
/// optional, defaults below; `"fatigue": "off"` turns the model off).
///
/// A user's recent load is a decayed count: every delivery adds 1, one that wakes or reaches
/// them outside their waking hours adds `nightWeight` more, one they ignore adds
/// `ignoredWeight` more; the count decays with a time constant of `memoryDays`, so a steady
/// `r` deliveries a day settles at `r × memoryDays`. Strain is the load per day above
/// `comfortablePerDay` (never negative). Then:
/// - the chance to open or act on a notification is multiplied by
///   `max(minimumOpenFactor, 1 - openDropPerStrain × strain)`;
/// - each delivery draws an opt-out with chance `optOutPerDelivery + optOutPerStrain × strain`:
///   with chance `revokeShare` the user revokes notification permission in Settings (for good),
///   otherwise they disable the kind just delivered, through the app's preferences.
///
/// The defaults and why:
/// - `comfortablePerDay` 6: the default scenario's median day before the budget; people accept
///   what a full routine day brings, complaints in app reviews start past it.
/// - `memoryDays` 3: irritation is about the last few days, not last month.
/// - `nightWeight` 2 and `ignoredWeight` 0.5: a notification at night is remembered as worse
///   than several in the day; an ignored one costs attention without giving anything back.
/// - `openDropPerStrain` 0.06, `minimumOpenFactor` 0.3: each extra notification a day takes
///   about 6 % off the open chance, never below 30 % of the rested one.
/// - `optOutPerDelivery` 0.00002 (about 1 % of users over 8 weeks at 6 a day) and
///   `optOutPerStrain` 0.00005 per extra notification a day per delivery (a user at 12 a day for
///   8 weeks opts out of something with about 25 % chance), `revokeShare` 0.15: most people
///   switch off the noisy kind, some switch off the app.
public struct FatigueModel: Hashable, Sendable {
    public var comfortablePerDay = 6.0
    public var memoryDays = 3.0
    public var nightWeight = 2.0
    public var ignoredWeight = 0.5
    public var openDropPerStrain = 0.06
    public var minimumOpenFactor = 0.3
    public var optOutPerDelivery = 0.000_02
    public var optOutPerStrain = 0.000_05
    public var revokeShare = 0.15
    /// false: users never tire (the model before fatigue; no draws are made).
    public var isEnabled = true

    public init() {}

    /// Users who never tire.
    public static var off: FatigueModel {
        var model = FatigueModel()
        model.isEnabled = false
        return model
    }

    /// The open chance's multiplier at `strain`.
    func openFactor(strain: Double) -> Double {
        isEnabled ? max(minimumOpenFactor, 1 - openDropPerStrain * strain) : 1
    }

    /// The chance of an opt-out on one delivery at `strain`.
    func optOutChance(strain: Double) -> Double {
        isEnabled ? min(1, optOutPerDelivery + optOutPerStrain * strain) : 0
    }

    static let keys: Set<String> = [
        "comfortablePerDay", "memoryDays", "nightWeight", "ignoredWeight", "openDropPerStrain", "minimumOpenFactor",
        "optOutPerDelivery", "optOutPerStrain", "revokeShare",
    ]

    static func parse(_ node: JSONNode?, reader: Reader) throws(ScenarioError) -> FatigueModel {
        if let node, case .string("off") = node.value { return .off }
        var model = FatigueModel()
        let object = try reader.dictionary(node, key: "fatigue", allowed: keys)
        func read(_ key: String, _ path: WritableKeyPath<FatigueModel, Double>, _ range: ClosedRange<Double>)
            throws(ScenarioError)
        {
            if let value = object[key] {
                model[keyPath: path] = try reader.number(value, key: "fatigue.\(key)", range: range)
            }
        }
        try read("comfortablePerDay", \.comfortablePerDay, 0...1_000)
        try read("memoryDays", \.memoryDays, 0.1...365)
        try read("nightWeight", \.nightWeight, 0...100)
        try read("ignoredWeight", \.ignoredWeight, 0...100)
        try read("openDropPerStrain", \.openDropPerStrain, 0...1)
        try read("minimumOpenFactor", \.minimumOpenFactor, 0...1)
        try read("optOutPerDelivery", \.optOutPerDelivery, 0...1)
        try read("optOutPerStrain", \.optOutPerStrain, 0...1)
        try read("revokeShare", \.revokeShare, 0...1)
        return model
    }
}

/// One user's recent load (see `FatigueModel`): a decayed count and when it was last decayed.
struct FatigueState {
    private(set) var load = 0.0
    private(set) var updatedAt: Int64 = 0

    /// Adds `weight` at `now` after decaying the count to it.
    mutating func add(_ weight: Double, at now: Int64, model: FatigueModel) {
        decay(to: now, model: model)
        load += weight
    }

    /// The load per day above the comfortable volume, at `now`.
    func strain(at now: Int64, model: FatigueModel) -> Double {
        var copy = self
        copy.decay(to: now, model: model)
        return max(0, copy.load / model.memoryDays - model.comfortablePerDay)
    }

    private mutating func decay(to now: Int64, model: FatigueModel) {
        guard now > updatedAt else { return }
        if load > 0 {
            let days = Double(now - updatedAt) / 86_400
            load *= exp(-days / model.memoryDays)
        }
        updatedAt = now
    }
}

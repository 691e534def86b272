import Foundation
import Models
import Scheduling
import Testing

@testable import Simulation

/// The scenario's `attentionBudget` and `fatigue` keys, the fatigue model's arithmetic and the
/// report's deliveries-per-day spread.
@Suite struct AttentionScenarioTests {
    @Test func absentKeysGiveTheDocumentedDefaults() throws {
        let scenario = try Scenario.parse(baseScenario(), file: "ok.json")
        #expect(scenario.attention.budget == AttentionBudget(interruptionsPerDay: 8))
        #expect(scenario.attention.holdoutShare == 0.2)
        #expect(scenario.fatigue == FatigueModel())
        #expect(scenario.fatigue.isEnabled)
    }

    @Test func presentKeysAreRead() throws {
        var object = baseScenario()
        object["attentionBudget"] = jsonValue(#"{"perDay": 5, "holdoutShare": 0.5}"#)
        object["fatigue"] = jsonValue(#"{"comfortablePerDay": 4, "revokeShare": 0}"#)
        let scenario = try Scenario.parse(object, file: "ok.json")
        #expect(scenario.attention.budget == AttentionBudget(interruptionsPerDay: 5))
        #expect(scenario.attention.holdoutShare == 0.5)
        #expect(scenario.fatigue.comfortablePerDay == 4 && scenario.fatigue.revokeShare == 0)
        object["attentionBudget"] = jsonValue(#"{"perDay": "none"}"#)
        object["fatigue"] = "off"
        let off = try Scenario.parse(object, file: "ok.json")
        #expect(off.attention.budget == nil)
        #expect(!off.fatigue.isEnabled)
    }

    @Test(arguments: [
        ("attentionBudget", #"{"perDay": 0}"#, "attentionBudget.perDay", "must be in 1...100"),
        ("attentionBudget", #"{"perDay": 2.5}"#, "attentionBudget.perDay", "expected a whole number"),
        ("attentionBudget", #"{"perDay": "lots"}"#, "attentionBudget.perDay", "expected \"none\" or a whole number"),
        ("attentionBudget", #"{"holdoutShare": 1.5}"#, "attentionBudget.holdoutShare", "must be in 0...1"),
        ("attentionBudget", #"{"perday": 3}"#, "attentionBudget.perday", "unknown key"),
        ("attentionBudget", "8", "attentionBudget", "expected an object"),
        ("fatigue", #"{"memoryDays": 0}"#, "fatigue.memoryDays", "must be in 0.1...365"),
        ("fatigue", #"{"revokeShare": -1}"#, "fatigue.revokeShare", "must be in 0...1"),
        ("fatigue", #"{"tiredness": 1}"#, "fatigue.tiredness", "unknown key"),
        ("fatigue", #""sometimes""#, "fatigue", "expected an object"),
    ])
    func aBadValueNamesTheKeyAndTheProblem(key: String, json: String, reportedKey: String, problem: String) {
        expectScenarioError(setting: key, to: json, reportedKey: reportedKey, problem: problem)
    }

    @Test func aSteadyVolumeSettlesAtItsDailyRateAndStrainIsWhatIsAboveComfort() {
        let model = FatigueModel()
        var state = FatigueState()
        // 12 a day, evenly, for 30 days: the load per day settles near 12, strain near 6.
        for n in 0..<(30 * 12) { state.add(1, at: Int64(n) * 7_200, model: model) }
        let strain = state.strain(at: 30 * 86_400, model: model)
        #expect(strain > 5 && strain < 7)
        // Rested after two weeks of silence.
        #expect(state.strain(at: 44 * 86_400, model: model) == 0)
        // A volume at or below comfort never strains.
        var calm = FatigueState()
        for n in 0..<(30 * 4) { calm.add(1, at: Int64(n) * 21_600, model: model) }
        #expect(calm.strain(at: 30 * 86_400, model: model) == 0)
    }

    @Test func strainLowersTheOpenChanceToAFloorAndRaisesTheOptOutChance() {
        let model = FatigueModel()
        #expect(model.openFactor(strain: 0) == 1)
        #expect(abs(model.openFactor(strain: 5) - 0.7) < 1e-9)
        #expect(model.openFactor(strain: 100) == model.minimumOpenFactor)
        #expect(model.optOutChance(strain: 6) > model.optOutChance(strain: 0))
        #expect(FatigueModel.off.openFactor(strain: 100) == 1)
        #expect(FatigueModel.off.optOutChance(strain: 100) == 0)
    }

    @Test func theSpreadCountsDaysWithoutDeliveries() {
        // 100 days: 50 empty, 40 with 3, 9 with 8, 1 with 20.
        let spread = AttentionReport.Spread(days: [3: 40, 8: 9, 20: 1], emptyDays: 50)
        #expect(spread.p50 == 0)
        #expect(spread.p90 == 3)
        #expect(spread.p99 == 8)
        #expect(spread.max == 20)
        let empty = AttentionReport.Spread(days: [:], emptyDays: 0)
        #expect(empty.p50 == 0 && empty.max == 0)
    }
}

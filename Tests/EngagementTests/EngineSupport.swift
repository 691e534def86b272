import Content
import Models
import TestSupport

@testable import Engagement

extension UserEngine {
    /// An engine writing copy from the bundled templates.
    init(
        profile: UserProfile, zone: ZoneRules, now: Instant, configuration: EngineConfiguration = .init(),
        contentSeed: UInt64 = 0
    ) {
        self.init(
            profile: profile, zone: zone, now: now, configuration: configuration, contentSeed: contentSeed,
            content: bundledContent)
    }
}

extension EngineConfiguration {
    /// The defaults without the attention budget, for tests of the rules it would otherwise cut
    /// into (every hydration time of a day, daily series).
    static var withoutAttentionBudget: EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.attentionBudget = nil
        return configuration
    }
}

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

import Content
import Models

@testable import Engagement

/// The bundled templates, loaded once for the engine tests (the apps load them at their composition roots).
let bundledContent: ContentGenerator = {
    do {
        return ContentGenerator(catalog: try TemplateCatalog.bundled())
    } catch {
        fatalError("the bundled templates do not load: \(error)")
    }
}()

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

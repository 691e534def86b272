public import Models

/// English template copy per kind and motivational style: the fallback that is always available
/// when the AI coach is not.
///
/// A thin facade over `TemplateLibrary.english` (Templates/en.json), kept for callers that
/// have a stable hash rather than a generator and a `TemplateMemory`. `variant` picks among the
/// templates eligible for the context (any integer is valid); only the chosen one is rendered.
/// The context is rendered as given: redact it for the user's privacy level first
/// (`PrivacyPolicy.redact(_:)`), or use `ContentGenerator`, which does.
public enum TemplateCopy {
    public static func render(
        _ kind: NotificationKind, style: MotivationalStyle, context: CopyContext, variant: Int = 0
    ) -> Copy {
        TemplateLibrary.english.render(kind, style: style, context: context, variant: variant).copy
    }
}

import Content

/// The bundled templates, loaded once for the simulation tests (the simulator's `main` loads
/// them at its composition root).
let testTemplates: TemplateCatalog = {
    do {
        return try TemplateCatalog.bundled()
    } catch {
        fatalError("the bundled templates do not load: \(error)")
    }
}()

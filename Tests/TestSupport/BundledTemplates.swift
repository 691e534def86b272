public import Content

/// The bundled template catalog, loaded once for the test targets. (The executables load it at
/// their composition roots and report a failure; in a test, a file that does not load is a
/// broken build, so it stops the run with the loader's error.)
public let bundledTemplates: TemplateCatalog = {
    do {
        return try TemplateCatalog.bundled()
    } catch {
        fatalError("the bundled templates do not load: \(error)")
    }
}()

/// A copy writer over `bundledTemplates`.
public let bundledContent = ContentGenerator(catalog: bundledTemplates)

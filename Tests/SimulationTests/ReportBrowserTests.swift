import Foundation
import TestSupport
import Testing

@testable import Simulation

/// report.html as a person sees it: rendered by headless Chromium (Debian's `chromium`, which
/// `make setup` installs) and checked by scripts/check-report-html.py. Without Chromium or
/// python3 the test is cancelled with the reason, never passed silently.
@Suite(.serialized) struct ReportBrowserTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The first executable called `name` on PATH.
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    @Test func theReportRendersInHeadlessChromiumWithoutScriptErrors() throws {
        guard ["chromium", "chromium-browser", "google-chrome"].contains(where: { Self.executable($0) != nil }) else {
            try Test.cancel(
                "chromium is not installed (make setup installs Debian's chromium): report.html not rendered")
        }
        guard let python = Self.executable("python3") else {
            try Test.cancel("python3 is not installed: scripts/check-report-html.py cannot run")
        }
        var scenario = try Scenario.parse(baseScenario(), file: "test.json")
        scenario.users = 30
        // A hostile name: the browser must show it as text and find no script element.
        scenario.name = "<script>document.title='owned'</script>"
        let folder = NSTemporaryDirectory() + "engagement-report-browser-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Simulator.run(
            RunOptions(scenario: scenario, templates: bundledTemplates, outputDirectory: folder, writeEvents: false))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [Self.repositoryRoot + "/scripts/check-report-html.py", folder + "/report.html", folder + "/report.png"]
            + ReportPage.sectionIDs.flatMap { ["--section", $0] }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus == 77 { try Test.cancel("the check script found no chromium: \(text)") }
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("no script errors"), "\(text)")
    }
}

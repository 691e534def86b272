// swift-tools-version: 6.2
import PackageDescription

// MARK: - Settings shared by every target

/// With `ENGAGEMENT_TESTABLE=1` (`make test` and CI set it), the release builds of the package's
/// own targets can be tested: `-enable-testing` lets the tests `@testable import` them. `make
/// test` runs the suite on that build (the simulation suites run whole scenarios, and run them
/// optimized), and CI builds its release products with it too, so it compiles one configuration
/// of every dependency, not a debug and a release one (the times are in docs/PERFORMANCE.md). Measured builds leave it
/// unset. (`-assert-config Debug`, which would keep `assert` as a debug build does, makes Swift
/// 6.3.1's optimizer crash on `engaged`; the code's few `assert`s are sanity checks, and every
/// `precondition` runs in release as in debug.)
let testableRelease = Context.environment["ENGAGEMENT_TESTABLE"] == "1"

/// One settings list for every target: Swift 6 language mode is the package default;
/// strict concurrency is complete in that mode, and these make the intent explicit.
let swiftSettings: [SwiftSetting] =
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
    + (testableRelease ? [.unsafeFlags(["-enable-testing"], .when(configuration: .release))] : [])

/// The test targets and what only tests use: in a testable release build they are compiled
/// without optimization (the code under test is optimized; optimizing the tests themselves would
/// only lengthen the build).
let testSettings: [SwiftSetting] =
    swiftSettings + (testableRelease ? [.unsafeFlags(["-Onone"], .when(configuration: .release))] : [])

/// With `ENGAGEMENT_OPTIMIZE=1` (the Makefile and CI set it), the engine's and the simulator's
/// modules are built with cross-module optimization in release: function bodies cross module
/// boundaries, so generic code (the simulated push device over its note type) is specialized
/// where it is used instead of asking the runtime for type metadata on every call. SwiftPM calls
/// the flag unsafe, and a package whose products carry one cannot be a version-pinned dependency,
/// so an app depending on these libraries builds them without it.
let crossModuleOptimization = Context.environment["ENGAGEMENT_OPTIMIZE"] == "1"
let engineSettings: [SwiftSetting] =
    swiftSettings
    + (crossModuleOptimization
        ? [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))] : [])
/// The simulator's world (a class per shard, touched on every event) with the same switch also
/// skips the runtime's dynamic exclusivity checks in release: each access to a shard's stored
/// properties would ask the runtime to record and clear it.
/// The compiler's static checks still apply, and the tests keep the dynamic ones (a debug build,
/// or a testable release build: `make test` and everything CI runs), while the measured release
/// runs (`make simulate`, `make bench`) run without them.
let simulatorSettings: [SwiftSetting] =
    engineSettings
    + (crossModuleOptimization && !testableRelease
        ? [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))] : [])

/// The targets holding generated API code (`EngagedAPI`, `EngagedClient`): imports without an
/// access level stay public there. The generator writes `public import` of every module into
/// every file, which Swift 6.3 reports as unused in most of them; `scripts/generate-api.sh`
/// drops the `public`, and these settings leave out `InternalImportsByDefault` so that the
/// imports still export what the public declarations use.
let generatedCodeSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// MARK: - Dependencies

let swiftLog = Target.Dependency.product(name: "Logging", package: "swift-log")
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")
// The server's dependencies: only `engaged` and its tests use them; the engine modules never do.
let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
let hummingbirdTesting = Target.Dependency.product(name: "HummingbirdTesting", package: "hummingbird")
/// The server's HTTP/1 channel settings (its idle timeout).
let hummingbirdCore = Target.Dependency.product(name: "HummingbirdCore", package: "hummingbird")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals = Target.Dependency.product(name: "UnixSignals", package: "swift-service-lifecycle")
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
/// The server's user tokens: signed JWTs (HS256), verified by key id.
let jwtKit = Target.Dependency.product(name: "JWTKit", package: "jwt-kit")
let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
let prometheus = Target.Dependency.product(name: "Prometheus", package: "swift-prometheus")
// The simulator's: latency histograms (HdrHistogram) and its event queue (swift-collections' Heap).
let histogram = Target.Dependency.product(name: "Histogram", package: "hdrhistogram-swift")
let heapModule = Target.Dependency.product(name: "HeapModule", package: "swift-collections")
// The APNs channel's: an HTTP/2 client (`APNs`), and a fake APNs server for its tests (`FakeAPNs`).
let asyncHTTPClient = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1 = Target.Dependency.product(name: "NIOHTTP1", package: "swift-nio")
let nioHTTP2 = Target.Dependency.product(name: "NIOHTTP2", package: "swift-nio-http2")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
let x509 = Target.Dependency.product(name: "X509", package: "swift-certificates")
let asn1 = Target.Dependency.product(name: "SwiftASN1", package: "swift-asn1")
// PostgreSQL, for the store and the queue of several workers (`PostgresStore`, `engaged worker`).
let postgresNIO = Target.Dependency.product(name: "PostgresNIO", package: "postgres-nio")
// The API's generated types and client (`EngagedAPI`, `EngagedClient`): the OpenAPI runtime, and a
// transport for the client, URLSession on Apple platforms and async-http-client elsewhere.
let openAPIRuntime = Target.Dependency.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")
let applePlatforms: [Platform] = [.macOS, .iOS, .tvOS, .watchOS, .visionOS]
let openAPIAsyncHTTPClient = Target.Dependency.product(
    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
    condition: .when(platforms: [.linux, .windows, .android, .wasi, .openbsd]))
let openAPIURLSession = Target.Dependency.product(
    name: "OpenAPIURLSession", package: "swift-openapi-urlsession", condition: .when(platforms: applePlatforms))
// The server's generated routing on Hummingbird's router.
let openAPIHummingbird = Target.Dependency.product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird")

// MARK: - Targets

/// A library target under `Modules/<name>` with its test target under `Tests/<name>Tests`.
func module(
    _ name: String, dependencies: [Target.Dependency] = [], exclude: [String] = [], resources: [Resource]? = nil,
    settings: [SwiftSetting] = engineSettings, testDependencies: [Target.Dependency] = []
) -> [Target] {
    [
        .target(
            name: name, dependencies: dependencies, path: "Modules/\(name)", exclude: exclude, resources: resources,
            swiftSettings: settings),
        .testTarget(
            name: "\(name)Tests", dependencies: [.target(name: name)] + dependencies + testDependencies,
            path: "Tests/\(name)Tests", swiftSettings: testSettings),
    ]
}

let libraries = [
    "Models", "Storage", "Scheduling", "Engagement", "LiveActivity", "Content", "Delivery", "Runtime", "Simulation",
    "APNs", "PostgresStore", "EngagementKit", "EngagedAPI", "EngagedClient", "EngagementKitClient",
]

let package = Package(
    name: "EngagementEngine",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: libraries.map { .library(name: $0, targets: [$0]) } + [
        .executable(name: "simulate", targets: ["simulate"]),
        .executable(name: "engaged", targets: ["engaged"]),
        .executable(name: "scale-test", targets: ["scale-test"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
    ],
    targets: module("Models")
        + module(
            "Storage", dependencies: ["Models", "Scheduling", "LiveActivity", grdb],
            testDependencies: ["StoreConformance", "TestSupport"])
        // The runtime's store and the workers' queue on PostgreSQL: postgres-nio stays out of the engine.
        + module(
            "PostgresStore",
            dependencies: [
                "Storage", "Models", "Runtime", "Delivery", postgresNIO, swiftLog, nioCore, nioPosix, nioSSL,
            ],
            testDependencies: ["StoreConformance", "TestSupport"])
        + module("Scheduling", dependencies: ["Models"])
        + module("LiveActivity", dependencies: ["Models"], testDependencies: ["SimulatedPlatform"])
        + module(
            "Content", dependencies: ["Models"], resources: [.copy("Templates")],
            testDependencies: ["SimulatedPlatform"])
        + module("Delivery", dependencies: ["Models"], testDependencies: ["SimulatedPlatform"])
        // The platform's simulated implementations (APNs, the coach, the Live Activity center) for
        // the simulator and the tests: the shipped modules keep only the interfaces. Their tests
        // stay beside the interface each one implements.
        + [
            .target(
                name: "SimulatedPlatform", dependencies: ["Models", "Delivery", "Content", "LiveActivity"],
                path: "Modules/SimulatedPlatform", swiftSettings: engineSettings)
        ]
        // The server's contract: openapi.yaml, and the types generated from it (`make generate`), the
        // one set the client and the server's routing share. Some schemas are the engine's values
        // (Models, which links nothing), never a store's: a client links no GRDB through the API.
        + module(
            "EngagedAPI", dependencies: ["Models", openAPIRuntime],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"], settings: generatedCodeSettings)
        // The API's client for an app or a backend, generated from the same document.
        + module(
            "EngagedClient",
            dependencies: ["EngagedAPI", openAPIRuntime, httpTypes, openAPIAsyncHTTPClient, openAPIURLSession],
            exclude: ["openapi-generator-config.yaml"], settings: generatedCodeSettings, testDependencies: ["Models"])
        // What an app adds: the server's plan mirrored into the device's notification center, the
        // event queue on SQLite. The models and the center's port only, never the engine or the
        // server's stores.
        + module("EngagementKit", dependencies: ["Models", "Delivery", "LiveActivity", grdb])
        // The kit's senders (events, device reports, the plan pull) on the generated client, so an
        // app writes no HTTP calls; the client's runtime and transport stay out of EngagementKit.
        + module(
            "EngagementKitClient",
            dependencies: [
                "EngagementKit", "EngagedClient", "EngagedAPI", "Models", "LiveActivity", openAPIRuntime, httpTypes,
            ],
            testDependencies: ["Delivery"])
        // The APNs provider client (HTTP/2, token auth): heavy dependencies stay out of the engine modules.
        + module(
            "APNs",
            dependencies: [
                "Delivery", "Models", asyncHTTPClient, crypto, swiftLog, nioCore, nioPosix, nioHTTP1, nioHTTP2, nioSSL,
            ],
            testDependencies: ["FakeAPNs"])
        + module(
            "Engagement", dependencies: ["Models", "Scheduling", "Content", "LiveActivity"],
            testDependencies: ["TestSupport"])
        + module(
            "Runtime",
            dependencies: ["Models", "Scheduling", "Engagement", "Storage", "Content", "LiveActivity", "Delivery"],
            testDependencies: ["TestSupport"])
        + [
            // What several test targets share (the bundled templates); tests only.
            .target(
                name: "TestSupport", dependencies: ["Content"], path: "Tests/TestSupport", swiftSettings: testSettings),
            // The stores' contracts as executable checks, run by every conformer's tests; tests only.
            .target(
                name: "StoreConformance", dependencies: ["Storage", "Models", "Scheduling"],
                path: "Tests/StoreConformance",
                swiftSettings: testSettings),
            // A fake APNs for tests and the APNs benchmark: real HTTP/2 over TLS on loopback.
            .target(
                name: "FakeAPNs",
                dependencies: ["Delivery", crypto, nioCore, nioPosix, nioHTTP1, nioHTTP2, nioSSL, x509, asn1],
                path: "Tests/FakeAPNs", swiftSettings: swiftSettings),
            .target(
                name: "Simulation",
                dependencies: [
                    "Models", "Scheduling", "Delivery", "Engagement", "Content", "Storage", "Runtime", "LiveActivity",
                    "EngagementKit", "SimulatedPlatform", swiftLog,
                    histogram, heapModule,
                ],
                path: "Simulation", exclude: ["Scenarios"],
                swiftSettings: simulatorSettings),
            .testTarget(
                name: "SimulationTests",
                dependencies: [
                    "Simulation", "Models", "Scheduling", "Delivery", "Engagement", "Content", "Storage", "TestSupport",
                    "SimulatedPlatform",
                ],
                path: "Tests/SimulationTests", swiftSettings: testSettings),
            .executableTarget(
                name: "bench",
                dependencies: [
                    "Engagement", "Scheduling", "Models", "Simulation", "Runtime", "Storage", "Content", "LiveActivity",
                    argumentParser,
                ],
                path: "Apps/Bench",
                swiftSettings: swiftSettings),
            // Pushes per second from the real APNs client to the fake over one connection; JWT signing time.
            .executableTarget(
                name: "bench-apns", dependencies: ["APNs", "FakeAPNs", "Delivery", "Models", crypto, swiftLog],
                path: "Apps/BenchAPNs", swiftSettings: swiftSettings),
            .executableTarget(
                name: "simulate",
                dependencies: [
                    "Simulation", "SimulatedPlatform", "Models", "Engagement", "Content", "Delivery", swiftLog,
                    argumentParser,
                ],
                path: "Apps/Simulator",
                swiftSettings: swiftSettings),
            // The simulator's command line: flags, limits, exit statuses (imports `simulate` with @testable).
            .testTarget(
                name: "SimulatorTests", dependencies: ["simulate", "Simulation", argumentParser],
                path: "Tests/SimulatorTests", swiftSettings: testSettings),
            // The server: a thin HTTP shell over the runtime (docs/ARCHITECTURE.md). Its routes and
            // command live in the executable target; the tests import it with @testable.
            .executableTarget(
                name: "engaged",
                dependencies: [
                    "Runtime", "Engagement", "Scheduling", "Storage", "Models", "Content", "Delivery", "APNs",
                    "LiveActivity", "PostgresStore", hummingbird, hummingbirdCore, argumentParser, serviceLifecycle,
                    unixSignals,
                    swiftLog, crypto, jwtKit, metrics,
                    prometheus,
                    // The coach's chat-completions client (`CompletionsCoach`).
                    asyncHTTPClient, nioCore, nioHTTP1,
                    // Trying the listeners' addresses before either starts (`ListenCheck`).
                    nioPosix,
                    // The API's types (EngagedAPI's), and the routing generated from the same document.
                    "EngagedAPI", openAPIRuntime, openAPIHummingbird, httpTypes,
                ],
                path: "Apps/Engaged", exclude: ["openapi-generator-config.yaml"], swiftSettings: swiftSettings),
            .testTarget(
                name: "EngagedTests",
                dependencies: [
                    "engaged", "Runtime", "Engagement", "Scheduling", "Storage", "Models", "Content", "TestSupport",
                    "LiveActivity", "PostgresStore",
                    "Delivery", "Simulation", "SimulatedPlatform", "EngagementKit", "EngagedAPI", "EngagedClient",
                    httpTypes,
                    openAPIRuntime,
                    "APNs", "FakeAPNs", hummingbird, hummingbirdTesting, argumentParser, swiftLog, crypto, jwtKit,
                    metrics, grdb,
                    prometheus, asyncHTTPClient,
                    // The listener's handlers, driven on an embedded channel.
                    nioCore, .product(name: "NIOEmbedded", package: "swift-nio"),
                ],
                path: "Tests/EngagedTests", swiftSettings: testSettings),
            // Several `engaged worker` processes over one PostgreSQL, one killed: exactly once?
            .executableTarget(
                name: "scale-test",
                dependencies: [
                    "PostgresStore", "FakeAPNs", "Runtime", "Storage", "Models", "Engagement", "Content",
                    argumentParser,
                    crypto, swiftLog, postgresNIO,
                ],
                path: "Apps/ScaleTest", swiftSettings: swiftSettings),
            // The scale test's own arithmetic (a worker's time to recover from a fault), imported
            // from the executable with @testable.
            .testTarget(
                name: "ScaleTestTests", dependencies: ["scale-test", "PostgresStore"], path: "Tests/ScaleTestTests",
                swiftSettings: testSettings),
            .executableTarget(
                name: "store-crash-writer", dependencies: ["Storage", "Models", argumentParser],
                path: "Apps/StoreCrashWriter",
                swiftSettings: swiftSettings),
        ]
)

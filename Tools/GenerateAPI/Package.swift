// swift-tools-version: 6.2
import PackageDescription

/// The OpenAPI generator as a command, for `make generate` only. It lives in its own package so
/// that building the engine, the server or the client never compiles the generator and its
/// dependencies (OpenAPIKit, Yams): the generated code is committed under `Modules/EngagedAPI`.
let package = Package(
    name: "GenerateAPI",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")
    ]
)

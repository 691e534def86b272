import EngagedAPI
import EngagedClient
public import EngagementKit
import Models

/// `DeviceReporter`'s sender on the generated client: a registration is
/// `POST /v1/users/{id}/devices`, a removal `DELETE /v1/users/{id}/devices/{token}`, each with
/// the user's token (renewed once on a 401 or 403, `UserCredential`). Answers the status the
/// server gave, whatever its body; no answer at all throws (the reporter says `failed`, and
/// reports again next time).
public struct EngagedDeviceReportSender: DeviceReportSender {
    public let connection: EngagedConnection

    public init(_ connection: EngagedConnection) { self.connection = connection }

    /// A permission or time zone report goes through the user's `EventQueue`
    /// (`DeviceReporter.send` puts it there), never through this sender: asked to send one, it
    /// throws this.
    public struct ReportIsAnEvent: Error, CustomStringConvertible {
        public var description: String {
            "a permission or time zone report is an event: DeviceReporter.send puts it in the user's EventQueue"
        }
    }

    public func send(_ report: DeviceReport) async throws -> Int {
        switch report {
        case .register(let userID, let token, let environment):
            let registration = Components.Schemas.DeviceRegistration(
                token: token, environment: Self.environment(of: environment))
            return try await connection.exchange { client in
                try await client.registerDevice(path: .init(id: userID.rawValue), body: .json(registration))
            }.answer.status
        case .remove(let userID, let token):
            return try await connection.exchange { client in
                try await client.removeDevice(path: .init(id: userID.rawValue, token: token))
            }.answer.status
        case .permission, .timeZone:
            throw ReportIsAnEvent()
        }
    }

    static func environment(
        of environment: PushEnvironment
    ) -> Components.Schemas.DeviceRegistration.EnvironmentPayload {
        switch environment {
        case .sandbox: .sandbox
        case .production: .production
        }
    }
}

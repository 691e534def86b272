public import Delivery
public import Foundation
public import Models

/// What the server was last told about this install, kept by the app between launches (it is
/// `Codable`; a fresh install starts from `init()`, having told nothing). It usually lives in
/// storage that backups carry (`UserDefaults`), so `installation` names the install that wrote
/// it: restored onto another phone, it is recognised as another's.
public struct DeviceReportState: Codable, Hashable, Sendable {
    /// The install that wrote this state (`DeviceReporter.installation`).
    public var installation: String?
    /// The user the push token was last registered for.
    public var userID: UserID?
    /// The push token last registered, lowercase hex.
    public var pushToken: String?
    public var environment: PushEnvironment?
    /// When the server last confirmed the registration.
    public var registeredAt: Instant?
    /// This install's earlier tokens still to remove from `userID`'s devices (the platform gave
    /// the install a new one).
    public var retiredTokens: [String]
    /// What the server was last told of the permission, and for which user.
    public var permissionAllowed: Bool?
    public var permissionUserID: UserID?
    /// What the server was last told of the device's time zone, and for which user.
    public var timeZone: String?
    public var timeZoneUserID: UserID?

    public init() { retiredTokens = [] }
}

/// One thing to tell the server about the device.
public enum DeviceReport: Hashable, Sendable {
    /// `POST /v1/users/{userID}/devices` with the token and its environment.
    case register(userID: UserID, token: String, environment: PushEnvironment)
    /// `DELETE /v1/users/{userID}/devices/{token}`: a token the install no longer has, or its
    /// token when its user signs out.
    case remove(userID: UserID, token: String)
    /// The permission, as an event through the user's `EventQueue` (ordered with the rest).
    case permission(userID: UserID, allowed: Bool)
    /// The device's time zone, as an event through the user's `EventQueue`.
    case timeZone(userID: UserID, identifier: String)
}

extension DeviceReport {
    /// The event a report goes as through the user's `EventQueue`; nil for a registration or a
    /// removal, which go through the sender.
    public var queuedEvent: AppEvent? {
        switch self {
        case .permission(_, let allowed): .notificationPermission(allowed: allowed)
        case .timeZone(_, let identifier): .timeZoneChanged(identifier)
        case .register, .remove: nil
        }
    }
}

/// Keeps the server's idea of this install right: its push token registered for its signed-in
/// user (once, again when the platform hands out another, and every `refreshSeconds` so the
/// server's least-recently-registered pruning never takes a live phone), its earlier tokens
/// removed, and its notification permission and time zone reported when they change.
///
/// The rules the anchors' users were bitten by:
/// - An iOS token rotation gives the install a new token: the new one is registered first, then
///   the old one removed, so the user is never without a device. A reinstall starts from a
///   fresh state: the new token is registered, and the old one stays on the server until APNs
///   answers 410 for it (the server then removes it).
/// - A state restored from another phone's backup (another `installation`) names that phone's
///   token: nothing of it is kept, the token here is registered anew, and the other phone's is
///   left alone (it may still be in use; APNs retires it if not).
/// - Another user signing in on this install: the token is registered for them. The server moves
///   a token from one user to another only when the first user's app removed it
///   (`signOutReports`) or the backend moves it with the API key; otherwise the registration
///   is refused (409) and reported `failed` until then. The earlier user's retired tokens are
///   forgotten (dead tokens: APNs retires them).
/// - Provisional and ephemeral permission allow notifications; `notDetermined` is not
///   reported (the user has not been asked).
/// - The phone re-matches its calendar triggers in a new zone the moment it moves, while the
///   app's backend may tell the server much later: the zone is reported as soon as the app
///   sees it differ, so the server plans the move as the phone's own change.
///
/// `reports` says what to send; `send` sends it, one run at a time, and records what the server
/// accepted (`confirm`); what failed is said again next time. A permission counts as told once
/// it is in the user's `EventQueue`, which delivers it (a queue whose events the server refuses
/// for good drops it, and it is told again at the next change).
public actor DeviceReporter {
    public private(set) var state: DeviceReportState
    /// This install's identifier, kept where backups do not carry it (the keychain with
    /// `ThisDeviceOnly`, or a file excluded from backup): a new one after a restore.
    public nonisolated let installation: String
    /// A registration older than this is sent again.
    public nonisolated let refreshSeconds: Int64
    private var isSending = false

    public init(
        state: DeviceReportState = DeviceReportState(), installation: String, refreshSeconds: Int64 = 7 * 86_400
    ) {
        self.state = state
        self.installation = installation
        self.refreshSeconds = refreshSeconds
    }

    /// The token APNs gave the app (`didRegisterForRemoteNotificationsWithDeviceToken`) as the
    /// server takes it: lowercase hex.
    public nonisolated static func hex(_ token: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(token.count * 2)
        for byte in token {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// What to tell the server for `userID`, signed in, given what the platform says now: its push
    /// token (nil before APNs gave one, or when registration failed), the permission and the
    /// device's time zone (`TimeZone.current.identifier`; nil for an app whose backend alone
    /// writes the zone). Registrations come before removals.
    public func reports(
        userID: UserID, pushToken: Data?, environment: PushEnvironment, permission: AuthorizationStatus,
        timeZone: String? = nil, at now: Instant
    ) -> [DeviceReport] {
        var reports: [DeviceReport] = []
        let sameUser = isThisInstall && state.userID == userID
        var retired = sameUser ? state.retiredTokens : []
        if let pushToken {
            let token = Self.hex(pushToken)
            let same = sameUser && state.pushToken == token && state.environment == environment
            // A registration "from the future" (the device's clock was set back) is not fresh.
            let elapsed = state.registeredAt.map { now.secondsSinceEpoch - $0.secondsSinceEpoch }
            let fresh = elapsed.map { (0..<refreshSeconds).contains($0) } ?? false
            if !(same && fresh) { reports.append(.register(userID: userID, token: token, environment: environment)) }
            // The platform replaced this install's token: the old one goes once the new one is in.
            if sameUser, let earlier = state.pushToken, earlier != token, !retired.contains(earlier) {
                retired.append(earlier)
            }
            // A token the platform handed back is this install's again, never one to remove.
            retired.removeAll { $0 == token }
        }
        reports += retired.map { .remove(userID: userID, token: $0) }
        if permission != .notDetermined {
            let allowed = permission.allowsNotifications
            if !isThisInstall || state.permissionUserID != userID || state.permissionAllowed != allowed {
                reports.append(.permission(userID: userID, allowed: allowed))
            }
        }
        if let timeZone, !isThisInstall || state.timeZoneUserID != userID || state.timeZone != timeZone {
            reports.append(.timeZone(userID: userID, identifier: timeZone))
        }
        return reports
    }

    /// What to tell the server when the signed-in user signs out: this install's tokens off their
    /// devices, so their pushes stop reaching a phone they left. Send it with their token, before
    /// it is forgotten; when that is not possible (the token expired and cannot be renewed), the
    /// backend removes them with the API key (`DELETE /v1/users/{id}/devices/{token}`).
    public var signOutReports: [DeviceReport] {
        guard isThisInstall, let userID = state.userID else { return [] }
        let tokens = (state.pushToken.map { [$0] } ?? []) + state.retiredTokens
        return tokens.map { .remove(userID: userID, token: $0) }
    }

    /// Records that the server accepted `report` at `now`.
    public func confirm(_ report: DeviceReport, at now: Instant) {
        if !isThisInstall {
            // Another phone's state, or none: nothing of it is this install's.
            state = DeviceReportState()
            state.installation = installation
        }
        switch report {
        case .register(let userID, let token, let environment):
            if state.userID == userID, let earlier = state.pushToken, earlier != token,
                !state.retiredTokens.contains(earlier)
            {
                state.retiredTokens.append(earlier)
            }
            if state.userID != userID { state.retiredTokens = [] }
            state.retiredTokens.removeAll { $0 == token }
            state.userID = userID
            state.pushToken = token
            state.environment = environment
            state.registeredAt = now
        case .remove(let userID, let token):
            guard state.userID == userID else { return }
            state.retiredTokens.removeAll { $0 == token }
            if state.pushToken == token {
                // Signed out: the next user, or this one again, is told everything afresh.
                state.pushToken = nil
                state.registeredAt = nil
                state.permissionUserID = nil
                state.permissionAllowed = nil
                state.timeZoneUserID = nil
                state.timeZone = nil
            }
        case .permission(let userID, let allowed):
            state.permissionUserID = userID
            state.permissionAllowed = allowed
        case .timeZone(let userID, let identifier):
            state.timeZoneUserID = userID
            state.timeZone = identifier
        }
    }

    /// Sends `reports` in order: registrations and removals through `sender`, the permission and
    /// the time zone into `queue` (the signed-in user's), confirming each the server accepted (a removal the server
    /// answers 404 for is gone already). A registration that fails holds back the removals after
    /// it (the old token stays until the new one is in) but not the permission. It stops at a
    /// 401 or 403 (the user's token needs renewing). One send runs at a time: a send asked for
    /// while one runs returns `busy` at once.
    public func send(
        _ reports: [DeviceReport], via sender: any DeviceReportSender, queue: EventQueue, at now: Instant
    ) async -> DeviceSendOutcome {
        guard !isSending else { return .busy }
        isSending = true
        defer { isSending = false }
        var failed = false
        var registrationFailed = false
        for report in reports {
            switch report {
            case .permission(let userID, _), .timeZone(let userID, _):
                guard queue.userID == userID, let event = report.queuedEvent else {
                    failed = true
                    continue
                }
                do { try await queue.enqueue(event, at: now) } catch {
                    failed = true
                    continue
                }
            case .register, .remove:
                if case .remove = report, registrationFailed { continue }
                let status: Int?
                do { status = try await sender.send(report) } catch { status = nil }
                switch (report, status) {
                case (.register, .some(200...201)), (.remove, 204), (.remove, 404): break
                case (_, 401), (_, 403): return .needsToken
                case (.register, _):
                    failed = true
                    registrationFailed = true
                    continue
                default:
                    failed = true
                    continue
                }
            }
            confirm(report, at: now)
        }
        return failed ? .failed : .sent
    }

    /// Whether the state was written by this install (false for a fresh one and for a backup
    /// restored from another phone).
    var isThisInstall: Bool { state.installation == installation }
}

/// How `DeviceReporter.send` ended.
public enum DeviceSendOutcome: Hashable, Sendable {
    /// Every report was accepted.
    case sent
    /// The server refused the user's token (401 or 403): renew it, then report again.
    case needsToken
    /// A report failed (the network, the server, a token another user holds, a full queue):
    /// reported again next time; the others were sent.
    case failed
    /// Another send was running: nothing was sent.
    case busy
}

/// Sends a registration or a removal (`POST` or `DELETE /v1/users/{id}/devices`) with the
/// signed-in user's token, answering the HTTP status.
public protocol DeviceReportSender: Sendable {
    func send(_ report: DeviceReport) async throws -> Int
}

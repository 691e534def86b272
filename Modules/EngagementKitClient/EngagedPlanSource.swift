import EngagedAPI
import EngagedClient
public import EngagementKit
import HTTPTypes
import Models

/// The plan pull on the generated client: `GET /v1/users/{id}/plan` for the credential's user,
/// with `If-None-Match` naming the plan the device holds in full, so an unchanged plan costs a
/// 304 and no body, and `?since=` naming it when the kit keeps that plan (`PlanPull.since`), so
/// a changed one may come as a delta that `PlanSync.apply` merges.
///
/// ```swift
/// let pull = sync.startPull()
/// let answer = try await planSource.pull(pull)
/// let outcome = sync.apply(answer, to: &center, at: now, answering: pull)
/// ```
///
/// The plan's body is read by `ServerPlan.decode`, not by the generated `LocalPlan`: a request
/// a newer server added that this build cannot read (a kind, a trigger) is left out and named in
/// `ServerPlan.unreadable` while the rest applies, where the generated type would refuse the
/// whole plan.
public struct EngagedPlanSource: Sendable {
    public let connection: EngagedConnection

    public init(_ connection: EngagedConnection) { self.connection = connection }

    /// Asks for the plan, naming the one `pull` holds (`PlanPull.ifNoneMatch`, `PlanPull.since`),
    /// and answers:
    /// - 200: the plan, whole or a delta (`PlanAnswer.plan`), or `PlanPullError.unreadable` naming the field when
    ///   its body is not a plan;
    /// - 304: `PlanAnswer.notModified`, when the pull named a plan and the answer's `ETag` (if
    ///   any) names the same version (compared weakly, as the route does); a 304 to a pull that
    ///   named none, or naming another version, is `unreadable` (field `ETag`): the device keeps
    ///   nothing it was not told;
    /// - 401 or 403, after one renewal of the token: `needsToken`;
    /// - any other status: `answered`, with `Retry-After` when the answer had one (429, 503);
    /// - no answer: `noAnswer`.
    public func pull(_ pull: PlanPull) async throws(PlanPullError) -> PlanAnswer {
        let ifNoneMatch = pull.ifNoneMatch
        let userID = connection.credential.userID
        let answer: RecordedAnswer
        do {
            answer = try await connection.exchange { client in
                try await client.getPlan(
                    path: .init(id: userID.rawValue), query: .init(since: pull.since),
                    headers: .init(ifNoneMatch: ifNoneMatch))
            }.answer
        } catch { throw .noAnswer("\(error)") }
        switch answer.status {
        case 200:
            guard let body = answer.body, !body.isEmpty else {
                throw .unreadable(PlanReadError(field: "", reason: "a 200 without a body, or one over 4 MiB"))
            }
            do { return .plan(try ServerPlan.decode(body)) } catch { throw .unreadable(error) }
        case 304:
            if let mismatch = Self.notModifiedMismatch(sent: ifNoneMatch, eTag: answer.headerFields[.eTag]) {
                throw .unreadable(PlanReadError(field: "ETag", reason: mismatch))
            }
            return .notModified
        case let status where RecordedAnswer.refusesToken(status):
            throw .needsToken(status: status)
        case let status:
            throw .answered(status: status, retryAfterSeconds: answer.retryAfterSeconds)
        }
    }

    /// Why a 304 with `eTag` does not confirm the plan `sent` named; nil when it does. Entity
    /// tags compare weakly: `W/"7"` and `"7"` name the same version.
    static func notModifiedMismatch(sent: String?, eTag: String?) -> String? {
        guard let sent else { return "a 304 to a pull that named no plan" }
        guard let eTag else { return nil }
        func opaque(_ tag: String) -> Substring {
            let trimmed = tag.drop { $0 == " " }
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        return opaque(eTag) == opaque(sent) ? nil : "a 304 naming \(eTag), the pull named \(sent)"
    }
}

/// Why a pull brought no plan.
public enum PlanPullError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server refused the user's token (401 or 403), and the credential had no new one or
    /// the new one was refused too: renew it (`UserCredential.replace(with:)`), then pull again.
    case needsToken(status: Int)
    /// Another status (404: the backend has not created the user yet; 429, 5xx: later, and not
    /// before `retryAfterSeconds`).
    case answered(status: Int, retryAfterSeconds: Int64?)
    /// The answer is not a plan, or a 304 that does not confirm the one held: the device keeps
    /// what it has.
    case unreadable(PlanReadError)
    /// No answer at all (offline, a timeout, a connection lost), with the transport's error.
    case noAnswer(String)

    public var description: String {
        switch self {
        case .needsToken(let status): "plan pull: the user's token was refused (\(status))"
        case .answered(let status, let retryAfter):
            "plan pull: answered \(status)" + (retryAfter.map { ", retry after \($0) s" } ?? "")
        case .unreadable(let error): "plan pull: \(error)"
        case .noAnswer(let reason): "plan pull: no answer: \(reason)"
        }
    }
}

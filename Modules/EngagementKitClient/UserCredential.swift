public import Models

/// The signed-in user's token (`POST /v1/users/{id}/tokens`, minted by the app's backend), which
/// every request of the kit's senders carries, and how the app renews it.
///
/// When the server refuses the token (401: expired, revoked, signed with a retired key; 403: not
/// this user's), the sender that met the refusal asks `renew` for a new one and repeats its
/// request once with it. Senders that meet the refusal at the same time share one renewal, and a
/// sender whose token was already replaced takes the replacement without asking again. When
/// `renew` gives no token (it returns nil or throws: the user signed out, the backend is out of
/// reach), the refusal stands and the sender reports it: the queue keeps its events and says
/// `FlushReport.needsToken`, the reporter answers `.needsToken`, a pull throws
/// `PlanPullError.needsToken`. Once the app has a token again it calls `replace(with:)` and
/// `EventQueue.resume()`.
public actor UserCredential {
    /// The user whose token this is: the path of every request the senders make for the plan.
    public nonisolated let userID: UserID
    /// The token requests carry now.
    public private(set) var token: String
    /// How many times `renew` was asked for a token.
    public private(set) var renewals = 0
    private let renew: @Sendable (UserID) async throws -> String?
    private var renewal: Task<String?, Never>?

    /// The credential of `userID` holding `token`; `renew` is asked for a new token when the
    /// server refuses the one held (nil or an error: none can be had now).
    public init(userID: UserID, token: String, renew: @escaping @Sendable (UserID) async throws -> String?) {
        self.userID = userID
        self.token = token
        self.renew = renew
    }

    /// Takes `token`, which the app got on its own (the user signed in again).
    public func replace(with token: String) { self.token = token }

    /// A token to repeat a request with, after the server refused `refused`: the one held when
    /// it is another already, otherwise what `renew` gives (one renewal for every caller waiting
    /// on it). Nil when `renew` gives none (nil, empty or an error).
    func renewed(after refused: String) async -> String? {
        if token != refused { return token }
        if let renewal { return await renewal.value }
        renewals += 1
        let task = Task { [renew, userID] () -> String? in
            guard let token = try? await renew(userID), !token.isEmpty else { return nil }
            return token
        }
        renewal = task
        let renewed = await task.value
        renewal = nil
        // A token the app handed over meanwhile (`replace(with:)`) is newer than this one.
        if let renewed, token == refused { token = renewed }
        return renewed.map { _ in token }
    }
}

public import Models

// MARK: - Inputs

/// One notification sent to a user, from the delivery log.
public struct DeliveryRecord: Hashable, Sendable, Codable {
    public var kind: NotificationKind
    /// When it was scheduled to fire or pushed.
    public var sentAt: Instant
    /// When it reached the user; nil when it never did (dropped, expired, push error).
    public var deliveredAt: Instant?
    /// The user opened it (tapped it, or an action opened the app). Counts only if delivered.
    public var opened: Bool
    /// The user used one of its actions or tapped it. Counts only if delivered.
    public var acted: Bool

    public init(kind: NotificationKind, sentAt: Instant, deliveredAt: Instant?, opened: Bool, acted: Bool) {
        self.kind = kind
        self.sentAt = sentAt
        self.deliveredAt = deliveredAt
        self.opened = opened
        self.acted = acted
    }

    /// A notification that was delivered when it was sent.
    public init(kind: NotificationKind, deliveredAt: Instant, opened: Bool, acted: Bool) {
        self.init(kind: kind, sentAt: deliveredAt, deliveredAt: deliveredAt, opened: opened, acted: acted)
    }
}

/// The user turned a kind off (setting `.disabled`) at `disabledAt`.
public struct OptOut: Hashable, Sendable, Codable {
    public var kind: NotificationKind
    public var disabledAt: Instant

    public init(kind: NotificationKind, disabledAt: Instant) {
        self.kind = kind
        self.disabledAt = disabledAt
    }
}

/// Delivery counts of one kind (or of all kinds), with the rates derived from them.
public struct DeliveryCounts: Hashable, Sendable, Codable {
    public var sent = 0
    public var delivered = 0
    public var opened = 0
    public var acted = 0
    /// Users who had at least one delivered in the window, or who opted out of the kind in the
    /// window after receiving it earlier (so `optOuts <= recipients`).
    public var recipients = 0
    /// Recipients who disabled the kind after receiving it (opt-outs).
    public var optOuts = 0

    public init() {}

    /// delivered / sent; nil when nothing was sent.
    public var deliveryRate: Double? { ratio(delivered, sent) }
    /// opened / delivered; nil when nothing was delivered.
    public var openRate: Double? { ratio(opened, delivered) }
    /// acted / delivered; nil when nothing was delivered.
    public var actionRate: Double? { ratio(acted, delivered) }
    /// optOuts / recipients; nil without recipients.
    public var optOutRate: Double? { ratio(optOuts, recipients) }

    public mutating func merge(_ other: DeliveryCounts) {
        sent += other.sent
        delivered += other.delivered
        opened += other.opened
        acted += other.acted
        recipients += other.recipients
        optOuts += other.optOuts
    }

    enum CodingKeys: String, CodingKey {
        case sent, delivered, opened, acted, recipients, optOuts, deliveryRate, openRate, actionRate, optOutRate
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sent = try c.decode(Int.self, forKey: .sent)
        delivered = try c.decode(Int.self, forKey: .delivered)
        opened = try c.decode(Int.self, forKey: .opened)
        acted = try c.decode(Int.self, forKey: .acted)
        recipients = try c.decode(Int.self, forKey: .recipients)
        optOuts = try c.decode(Int.self, forKey: .optOuts)
    }

    /// The counts and the derived rates (null when undefined).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sent, forKey: .sent)
        try c.encode(delivered, forKey: .delivered)
        try c.encode(opened, forKey: .opened)
        try c.encode(acted, forKey: .acted)
        try c.encode(recipients, forKey: .recipients)
        try c.encode(optOuts, forKey: .optOuts)
        try c.encode(deliveryRate, forKey: .deliveryRate)
        try c.encode(openRate, forKey: .openRate)
        try c.encode(actionRate, forKey: .actionRate)
        try c.encode(optOutRate, forKey: .optOutRate)
    }
}

func ratio(_ numerator: some BinaryInteger, _ denominator: some BinaryInteger) -> Double? {
    denominator > 0 ? Double(numerator) / Double(denominator) : nil
}

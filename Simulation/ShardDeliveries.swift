import Content
import Delivery
import Engagement
import Models
import Scheduling
import Storage

/// What reaches people, and what they do with it: a notification released (judged against the
/// engine's rules), shown (counted, and answered or ignored by the behaviour model), answered
/// (the response goes back to the engine).
extension Shard {

    /// Which showing of its request a shown notification is: the fire instant for a repeating
    /// request (the same identifier fires once per occurrence), nil for a one-off.
    func showingInstant(of notification: DeliveredNotification) -> Int64? {
        DeviceClock.isDailySeries(notification.request) ? notification.deliveredAt.secondsSinceEpoch : nil
    }

    /// The engine's rules judged on a notification it released at `instant`: a local request
    /// firing on the device (released and shown at once), or a push handed to APNs at the time
    /// the engine chose (`shownNow` false). A push is judged again for the rules of the moment the
    /// person meets it (quiet hours, caps, the morning greeting) in `judgeShown`, when the phone
    /// shows it, which may be later than its release or never; the inbox holds it either way.
    /// A request a jump of the device's clock fired ahead of its time (`releasedEarly`) is judged
    /// for what it is, not for when (`ObservedDelivery.releasedEarly`).
    func judgeRelease(
        _ local: Int, _ request: NotificationRequest, at instant: Instant, releasedEarly: Bool = false,
        shownNow: Bool = true
    ) throws {
        let content = request.content
        let id = request.identifier.rawValue
        drainResolvedWithItems(local, id)
        let observed = ObservedDelivery(request, at: instant, releasedEarly: releasedEarly)
        let profile = inPlace(local) { $0.engine.profile }
        let broken =
            shownNow
            ? users[local].checker.observe(observed, profile: profile, zone: users[local].zone)
            : users[local].checker.observeRelease(observed, profile: profile, zone: users[local].zone)
        for violation in broken { try broke(violation, local, by: request, at: instant) }
        let payload = InvariantChecker.checkPayload(content, id: id, recipient: inPlace(local) { $0.engine.recipient })
        stats.payloadBytesMax = max(stats.payloadBytesMax, payload.bytes)
        for (violation, detail) in payload.broken {
            try journal.violation(violation, &users[local], at: instant, detail: detail, stats: &stats)
        }
    }

    /// A push the phone shows at `instant`, released earlier: the rules of the moment the person
    /// meets it (`InvariantChecker.observeShown`).
    func judgeShown(_ local: Int, _ request: NotificationRequest, at instant: Instant) throws {
        let observed = ObservedDelivery(request, at: instant)
        let profile = inPlace(local) { $0.engine.profile }
        for violation in users[local].checker.observeShown(observed, profile: profile, zone: users[local].zone) {
            try broke(violation, local, by: request, at: instant)
        }
    }

    /// `violation`, broken by the delivery of `request` at `instant`: counted apart with its
    /// cause when no design could have kept it (`unavoidableCause`), as a violation otherwise.
    private func broke(_ violation: Invariant, _ local: Int, by request: NotificationRequest, at instant: Instant)
        throws
    {
        let id = request.identifier.rawValue
        guard let cause = unavoidableCause(of: violation, local, request, at: instant) else {
            try journal.violation(violation, &users[local], at: instant, detail: id, stats: &stats)
            return
        }
        stats.deployment.unavoidable[cause] += 1
        if stats.deployment.unavoidableExamples.count < ShardStats.violationExampleLimit {
            stats.deployment.unavoidableExamples.append(
                "\(violation.rawValue) (\(cause.rawValue)): user \(users[local].traits.profile.id) at \(instant)"
                    + " (\(users[local].zone.formatted(instant))) \(id)")
        }
        try journal.log(&users[local], instant, "unavoidable") {
            $0.id("invariant", violation.rawValue)
            $0.id("cause", cause.rawValue)
            $0.id("id", id)
        }
    }

    /// One notification shown to the person (judged when released and, for a push, when shown).
    func observeDelivery(
        _ local: Int, _ notification: DeliveredNotification, on channel: DeliveryChannel, at now: Instant
    ) throws {
        let content = notification.request.content
        let id = notification.request.identifier.rawValue
        let deliveredAt = notification.deliveredAt
        try journal.log(&users[local], deliveredAt, "delivered") {
            $0.id("kind", content.kind.rawValue)
            $0.id("id", id)
            $0.id("level", content.interruptionLevel.rawValue)
            $0.id("channel", channel.rawValue)
            if notification.presentation == .quiet { $0.id("presentation", "quiet") }
        }
        let showing = FiringKey(id, repeatsAt: showingInstant(of: notification))
        for violation in users[local].channelChecker.observeShown(showing, on: channel, at: deliveredAt) {
            try journal.violation(violation, &users[local], at: deliveredAt, detail: id, stats: &stats)
        }
        guard !draining else {
            // The drain judges and counts, but the users stand still and their days are over.
            stats.drain.delivered += 1
            return
        }
        stats.deliveries += 1
        stats.deliveriesByKind[content.kind] += 1
        countDeliveryDay(local, at: deliveredAt)
        tire(local, at: deliveredAt)
        stats.deliveriesByLocalHour.add(
            content.kind, secondOfDay: users[local].zone.localDateTime(at: deliveredAt).secondOfDay)
        stats.deliveredByKindWeek.add(content.kind, week: week(of: deliveredAt))
        users[local].weekDeliveries.append(
            DeliveryRecord(
                kind: content.kind, sentAt: deliveredAt,
                deliveredAt: notification.presentation == .banner || notification.presentation == .quiet
                    ? deliveredAt : nil, opened: false, acted: false))
        users[local].weekDeliveryIDs.append(notification.request.identifier)
        storeWriter?.recordLedger(
            userID: users[local].traits.profile.id, notification.request.identifier, content.kind, .delivered,
            at: deliveredAt)
        react(local, to: PerceivedNotification(notification), at: now)
        try considerOptOut(local, of: content.kind, at: now)
    }

    /// Asks the behaviour model how the user reacts, and applies it: the end of a lapse, and the
    /// response event.
    private func react(_ local: Int, to notification: PerceivedNotification, at now: Instant) {
        // Read the fields in place: a copy of the whole user (its engine included) costs more than the reaction.
        let tone = Behaviour.tone(
            of: notification.occurrence, for: users[local].traits.profile,
            configuration: inPlace(local) { $0.engine.configuration })
        let absence = users[local].absence(at: now.secondsSinceEpoch)
        let localMinute = users[local].zone.localDateTime(at: now).secondOfDay / 60
        let openFactor = scenario.fatigue.openFactor(
            strain: users[local].fatigue.strain(at: now.secondsSinceEpoch, model: scenario.fatigue))
        let reaction = Behaviour.reaction(
            to: notification, absence: absence, habits: users[local].traits.persona.habits, localMinute: localMinute,
            tone: tone, openFactor: openFactor, generator: &users[local].generator)
        guard let reaction else {
            if absence == .present, scenario.fatigue.isEnabled {
                users[local].fatigue.add(
                    scenario.fatigue.ignoredWeight, at: now.secondsSinceEpoch, model: scenario.fatigue)
            }
            return
        }
        if reaction.returns {
            users[local].lapsedUntil = now.secondsSinceEpoch
            users[local].churned = false
            // The lapse ends here, answered: one return, by the lift's definition, counted once.
            if let start = users[local].lapseStartedAt {
                users[local].lapseStartedAt = nil
                stats.lift.record(
                    heldOut: inPlace(local) { $0.engine.isHeldOut },
                    returned: now.secondsSinceEpoch - start <= 14 * .secondsPerDay,
                    promptedByNudge: true)
            }
        }
        queue.push(
            time: now.secondsSinceEpoch + reaction.delaySeconds, user: Int32(local),
            kind: .response(requestID: notification.requestID, kind: notification.kind, action: reaction.action))
    }

    func respond(
        _ local: Int, requestID: RequestID, kind: NotificationKind, action: NotificationActionID, at now: Instant
    ) throws {
        stats.responses[action] += 1
        users[local].checker.observeResponse(action)
        if action != .dismiss && !action.isSnooze {
            let channel = ChannelPolicy.channel(for: kind)
            stats.channels[channel].opened += 1
            if action != .defaultTap { stats.channels[channel].acted += 1 }
            if users[local].remote.inbox.read(requestID) {
                tape?.record(.read(requestID: requestID), of: users[local].traits.profile.id, at: now)
                try inboxChanged(local, at: now)
            }
            stats.actedByKindWeek.add(kind, week: week(of: now))
            let heldOut = inPlace(local) { $0.engine.isHeldOutOfBudget }
            stats.attention[heldOut: heldOut].opened += 1
            if action != .defaultTap { stats.attention[heldOut: heldOut].acted += 1 }
            if let index = users[local].weekDeliveryIDs.lastIndex(of: requestID) {
                users[local].weekDeliveries[index].opened = true
                users[local].weekDeliveries[index].acted = action != .defaultTap
            }
        }
        try journal.log(&users[local], now, "response") {
            $0.id("kind", kind.rawValue)
            $0.id("id", requestID.rawValue)
            $0.id("action", action.rawValue)
        }
        storeWriter?.recordLedger(userID: users[local].traits.profile.id, requestID, kind, .responded, at: now)
        try step(local, .notificationResponse(requestID: requestID, kind: kind, action: action), at: now)
    }
}

extension ObservedDelivery {
    /// `request` delivered at `instant`, as the checker sees it.
    init(_ request: NotificationRequest, at instant: Instant, releasedEarly: Bool = false) {
        self.init(
            id: request.identifier.rawValue, kind: request.content.kind, level: request.content.interruptionLevel,
            at: instant,
            repeats: DeviceClock.isDailySeries(request), releasedEarly: releasedEarly)
    }
}

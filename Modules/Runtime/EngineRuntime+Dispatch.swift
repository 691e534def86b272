import Engagement
public import Models
public import Storage

/// The outbox's dispatch: the rows due by the clock, each performed by its step
/// (`OutboxSteps`), and what follows each send committed before its row is completed.
extension EngineRuntime {
    /// The instant of the soonest pending outbox row, or nil when nothing is pending.
    public func nextDueAt() throws(RuntimeError) -> Instant? {
        do {
            return try store.dueOutbox(through: Instant(secondsSinceEpoch: Int64.max / 2), limit: 1).first?.dueAt
        } catch { throw .store(error) }
    }

    /// Performs the rows due by the clock's time, at most `limit`, each by its step
    /// (`OutboxSteps.steps`): a job applies its background job to the engine; an inbox row
    /// becomes an item of the user's inbox in the transaction that completes it
    /// (`InboxStore.deliverToInbox`); a badge sync past its slot's grace moves to the next slot;
    /// a row this build cannot read is completed unperformed; the rest go to `transport`,
    /// concurrently, at most `maxConcurrentSends` users at once and one user's rows in order (one
    /// APNs connection carries many streams), after the rows the runtime performs itself. What
    /// follows a send (`OutboxSteps.afterSend`) is committed before its row is completed; a row
    /// whose transport throws stays pending. Returns the rows completed.
    public func dispatchDue(limit: Int = 256, through transport: any ChannelTransport) async throws(RuntimeError)
        -> [OutboxRow]
    {
        try await dispatchDueBatch(limit: limit, through: transport).completed
    }

    /// `dispatchDue`, saying also what a loop needs to decide whether to ask again
    /// (`DispatchedBatch`): the claim-time rules defer, merge and hold back part of a backlog.
    public func dispatchDueBatch(limit: Int = 256, through transport: any ChannelTransport) async throws(RuntimeError)
        -> DispatchedBatch
    {
        // Rows of steps still being written are not in the store yet, nor are their withdrawals.
        await group.settled(through: sequence)
        let now = clock.now()
        var due: [OutboxRow]
        do { due = try store.dueOutbox(through: now, limit: limit) } catch { throw .store(error) }
        let listed = due.count
        var heldBack = 0
        if !store.claimsWithRules { (due, heldBack) = try claim(due, at: now) }
        var completed: [OutboxRow] = []
        var discarded: [(key: OutboxKey, reason: String)] = []
        var sends: [OutboxRow] = []
        for (row, step) in OutboxSteps.steps(for: due, zone: seriesZone(of:), silentPushes: silentPushes, at: now) {
            switch step {
            case .runJob(let job):
                // The job's own commit replaces this row with the job's next run. A user whose
                // engine cannot be loaded keeps the row and holds up no one else.
                do { try await apply(.backgroundTaskLaunched(job), to: row.userID) } catch { continue }
            case .deliverToInbox(let delivery, let next):
                // Delivered and completed in one transaction: nothing to complete below.
                do { try store.deliverToInbox(delivery, next: next, at: now) } catch { throw .store(error) }
                completed.append(row)
                continue
            case .moveSync(let next):
                // One user's failed commit (another process changed their engine) holds up no one else.
                do { try await commitRows([next], for: row.userID) } catch { continue }
            case .send:
                sends.append(row)
                continue
            case .discard(let reason):
                discarded.append((row.key, reason))  // completed below, unperformed
            }
            do { try store.completeOutbox(keys: [row.key], at: now) } catch { throw .store(error) }
            completed.append(row)
        }
        let sent = await Self.perform(sends, through: transport, atMost: Self.maxConcurrentSends)
        var done: [OutboxRow] = []
        for (row, report) in sent {
            let followUp = OutboxSteps.afterSend(
                row, report: report, zone: seriesZone(of: row), silentPushes: silentPushes, at: now)
            // When the series' commit fails, this row stays pending (sent again later under the
            // same apns-id), and the rows of every other user are still completed.
            if let series = followUp.series {
                do { try await commitRows([series], for: row.userID) } catch { continue }
            }
            // At best: a user whose engine cannot be loaded gets no sync nor the missed sync's
            // step, and the row is done.
            if let sync = followUp.badgeSync { try? await commitRows([sync], for: row.userID) }
            if followUp.syncMissed, (try? loadEngine(row.userID))?.engine.phoneHasNotHeard == true {
                _ = try? await apply(.syncMissed, to: row.userID)
            }
            done.append(row)
        }
        do { try store.completeOutbox(keys: done.map(\.key), at: now) } catch { throw .store(error) }
        return DispatchedBatch(
            listed: listed, completed: completed + done, leftPending: due.count - completed.count - done.count,
            heldBack: heldBack, discarded: discarded)
    }

    /// The zone a daily series' next row is placed in: the user's, for a repeating row only (a
    /// one-off needs no engine loaded); nil when the engine cannot be loaded.
    private func seriesZone(of row: OutboxRow) -> ZoneRules? {
        guard row.payload.repeatingMatch != nil else { return nil }
        return (try? loadEngine(row.userID))?.engine.zone
    }
}

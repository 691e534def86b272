import Models
import Storage

/// How a dispatch hands its sends to the transport: users at once, each user's rows in order.
extension EngineRuntime {
    /// Users whose rows a dispatch sends at once at most.
    public static let maxConcurrentSends = 64

    /// Performs `rows` through `transport`; returns those performed with their reports, in the
    /// order of `rows`. One user's rows go one after another, in the order given, so a user's
    /// alerts reach APNs in the order they were due (sent at once, a later one could overtake an
    /// earlier one); users go at once, at most `limit` at a time. A row whose transport throws
    /// stays pending, and so do the same user's rows after it: sent now, they would overtake it.
    /// A throw is the store failing or the claim running out, which holds for those rows too.
    static func perform(_ rows: [OutboxRow], through transport: any ChannelTransport, atMost limit: Int) async
        -> [(OutboxRow, SendReport)]
    {
        guard rows.count > 1 else {
            guard let row = rows.first, let report = try? await transport.perform(row) else { return [] }
            return [(row, report)]
        }
        var chains: [[Int]] = []
        var chainOfUser: [UserID: Int] = [:]
        for index in rows.indices {
            if let chain = chainOfUser[rows[index].userID] {
                chains[chain].append(index)
            } else {
                chainOfUser[rows[index].userID] = chains.count
                chains.append([index])
            }
        }
        var reports = [SendReport?](repeating: nil, count: rows.count)
        await withTaskGroup(of: [(Int, SendReport)].self) { group in
            var next = 0
            func start() {
                let chain = chains[next]
                next += 1
                group.addTask {
                    var performed: [(Int, SendReport)] = []
                    for index in chain {
                        guard let report = try? await transport.perform(rows[index]) else { break }
                        performed.append((index, report))
                    }
                    return performed
                }
            }
            while next < min(limit, chains.count) { start() }
            for await performed in group {
                for (index, report) in performed { reports[index] = report }
                if next < chains.count { start() }
            }
        }
        return rows.indices.compactMap { index in reports[index].map { (rows[index], $0) } }
    }
}

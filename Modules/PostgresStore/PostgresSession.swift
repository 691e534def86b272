import NIOCore
import PostgresNIO
import Storage

/// One borrowed connection and the pool that runs statements on it: what the store's statements
/// are written against, inside `PostgresPool.withConnection` or `PostgresPool.transaction`.
struct PostgresSession {
    let pool: PostgresPool
    let connection: PostgresConnection

    /// Runs `query` and returns all of its rows.
    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        try pool.query(query, on: connection)
    }

    /// Runs `query`, ignoring any rows.
    func execute(_ query: PostgresQuery) throws {
        try pool.query(query, on: connection)
    }
}

extension PostgresPool {
    /// Runs `body` on a connection outside any explicit transaction (one statement sees one
    /// committed state).
    func reading<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        try withConnection { connection in try body(PostgresSession(pool: self, connection: connection)) }
    }

    /// Runs `body` in a read-only `REPEATABLE READ` transaction: all of its statements see the
    /// same committed state (a page and its counts, say).
    func readingOneSnapshot<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        try transaction { connection in
            let session = PostgresSession(pool: self, connection: connection)
            try session.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try body(session)
        }
    }

    /// Runs `body` in one `READ COMMITTED` transaction: all of its writes or none.
    func writing<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        try transaction { connection in try body(PostgresSession(pool: self, connection: connection)) }
    }
}

/// Reading values out of result rows. A value that does not decode (a NULL where none may be,
/// another type) means the database holds something this build never wrote: `StoreError.corrupt`
/// naming the table and column.
enum PostgresColumns {
    static func decode<each Column: PostgresDecodable>(
        _ row: PostgresRow, as types: (repeat each Column).Type, table: String
    ) throws(StoreError) -> (repeat each Column) {
        do {
            return try row.decode(types)
        } catch let error as PostgresDecodingError {
            throw .corrupt("table \(table), column \(error.columnName): \(error.code) (\(error.postgresType))")
        } catch {
            throw .corrupt("table \(table): a row does not decode: \(error)")
        }
    }

    static func decode<Column: PostgresDecodable>(_ row: PostgresRow, as type: Column.Type, table: String)
        throws(StoreError) -> Column
    {
        do {
            return try row.decode(type)
        } catch let error as PostgresDecodingError {
            throw .corrupt("table \(table), column \(error.columnName): \(error.code) (\(error.postgresType))")
        } catch {
            throw .corrupt("table \(table): a row does not decode: \(error)")
        }
    }

    /// A `bytea` value's bytes. (`[UInt8]` binds as `char[]` in PostgresNIO, so bytes go in and
    /// out as `ByteBuffer`.)
    static func bytes(_ buffer: ByteBuffer) -> [UInt8] { Array(buffer.readableBytesView) }

    /// `bytes` as a `bytea` bind.
    static func bytea(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }

    /// A column that decoded but holds a value outside its domain (an unknown enum case).
    static func unknownValue(_ value: String, table: String, column: String, row: String) -> StoreError {
        .corrupt("table \(table), column \(column): \(row) holds an unknown value \"\(value)\"")
    }
}

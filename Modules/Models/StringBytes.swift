extension String {
    /// Calls `body` with the string's UTF-8: its own storage, read in place, when it is
    /// contiguous (a native string always is), else a contiguous copy. Unlike `withUTF8` it needs
    /// no mutable copy of the string. Identifiers, template bodies, event lines and hashes read
    /// strings this way on every decision.
    @inlinable public func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}

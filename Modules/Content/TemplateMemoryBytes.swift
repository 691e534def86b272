public import Models

extension TemplateMemory {
    /// Writes the memory compactly (a snapshot part): per kind, the template and the body's hash.
    public func write(to writer: inout CompactWriter) {
        writer.list(entries) { writer, entry in
            writer.unsigned(UInt64(entry.template))
            writer.unsigned(UInt64(entry.bodyHash))
        }
    }

    /// Reads what `write(to:)` wrote.
    public init(reading reader: inout CompactReader) throws {
        self.init()
        entries = try reader.list(limit: 64) { reader in
            let template = try reader.unsigned()
            let hash = try reader.unsigned()
            guard template <= UInt64(UInt16.max), hash <= UInt64(UInt32.max) else {
                throw CompactBytesError(offset: reader.offset, problem: "template memory entry out of range")
            }
            return Entry(template: UInt16(template), bodyHash: UInt32(hash))
        }
    }
}

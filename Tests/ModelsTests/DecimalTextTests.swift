import Testing

@testable import Models

/// `DecimalText` writes and counts what `String(value)` would, for every width and sign.
@Suite struct DecimalTextTests {
    @Test func bytesAndLengthAreThoseOfTheString() {
        var generator = SeededGenerator(seed: 11)
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, Int64.max, Int64.min, Int64.min + 1, Int64.max - 1]
        for digits in 1...18 {
            let power = (0..<digits).reduce(Int64(1)) { value, _ in value * 10 }
            values += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        for _ in 0..<2_000 { values.append(Int64(bitPattern: generator.next()) >> (generator.next() % 63)) }
        for value in values {
            let written = DecimalText.withBytes(of: value) { Array($0) }
            #expect(written == Array(String(value).utf8), "\(value)")
            #expect(DecimalText.length(of: value) == written.count, "\(value)")
        }
    }
}

/// `withUTF8Bytes` hands over exactly the string's UTF-8, small, large, empty or not ASCII.
@Suite struct StringBytesTests {
    @Test(arguments: ["", "a", "hydration.2027-06-01.0600", "é e\u{301} 💧", String(repeating: "x", count: 5_000)])
    func theBytesAreTheStringsUTF8(text: String) {
        #expect(text.withUTF8Bytes { Array($0) } == Array(text.utf8))
    }
}

import Models
import Testing

@testable import Scheduling

/// `OccurrenceMap` held to a `Dictionary`: built from entries in any order (sorted, reversed,
/// shuffled, with duplicates where the later wins), then changed by random sets and removals.
@Suite struct OccurrenceMapTests {
    private func id(_ number: Int) -> OccurrenceID {
        let date = LocalDate(year: 2027, month: 1 + number % 12, day: 1 + number / 12 % 28)
        return OccurrenceID(.hydration, date: date, .minuteOfDay(number % 1_440))
    }

    private func expectSame(_ map: OccurrenceMap<Int>, _ model: [OccurrenceID: Int]) {
        #expect(map.count == model.count)
        let keys = map.entries.map(\.id.packed)
        #expect(keys == keys.sorted() && Set(keys).count == keys.count, "keys in order, once each")
        for (id, value) in model { #expect(map[id] == value) }
        for entry in map.entries { #expect(model[entry.id] == entry.value) }
    }

    @Test func buildingFromEntriesInAnyOrderMatchesADictionary() {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<400 {
            let count = round % 5 == 0 ? 0 : Int(generator.next() % 90)
            var entries: [(OccurrenceID, Int)] = (0..<count).map { _ in
                (id(Int(generator.next() % 200)), Int(generator.next() % 1_000))
            }
            switch round % 3 {
            case 0: entries.sort { $0.0.packed < $1.0.packed }
            case 1: entries.sort { $0.0.packed > $1.0.packed }
            default: entries.shuffle(using: &generator)
            }
            var model: [OccurrenceID: Int] = [:]
            for (key, value) in entries { model[key] = value }  // a later duplicate wins
            var map = OccurrenceMap<Int>(entries)
            expectSame(map, model)
            for _ in 0..<40 {
                let key = id(Int(generator.next() % 200))
                let value: Int? = generator.next() % 3 == 0 ? nil : Int(generator.next() % 1_000)
                map[key] = value
                model[key] = value
            }
            expectSame(map, model)
        }
    }

    @Test func removingWhereMatchesADictionaryFilter() {
        var generator = SeededGenerator(seed: 11)
        for round in 0..<200 {
            let count = round % 7 == 0 ? 0 : Int(generator.next() % 90)
            let entries = (0..<count).map { _ in (id(Int(generator.next() % 200)), Int(generator.next() % 1_000)) }
            var model: [OccurrenceID: Int] = [:]
            for (key, value) in entries { model[key] = value }
            var map = OccurrenceMap<Int>(entries)
            // By the key alone: none, all, or every occurrence of some months.
            let months = UInt64(round % 4 == 0 ? 0 : round % 4 == 1 ? 0xFFF : generator.next() & 0xFFF)
            let remove = { (id: OccurrenceID) in months >> UInt64(id.date.month - 1) & 1 == 1 }
            map.removeAll(where: remove)
            model = model.filter { !remove($0.key) }
            expectSame(map, model)
        }
    }
}

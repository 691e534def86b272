import PostgresStore
import Testing

@Suite("PostgresURL")
struct PostgresURLTests {
    @Test("A full URL reads back its parts; the description hides the password")
    func fullURL() throws {
        let url = try PostgresURL("postgres://ana:secret@127.0.0.1:6543/engaged")
        #expect(url.host == "127.0.0.1")
        #expect(url.port == 6543)
        #expect(url.username == "ana")
        #expect(url.password == "secret")
        #expect(url.database == "engaged")
        #expect(url.description == "postgres://ana@127.0.0.1:6543/engaged")
    }

    @Test("The port defaults to 5432 and postgresql:// is accepted")
    func defaults() throws {
        let url = try PostgresURL("postgresql://ana@localhost/engaged")
        #expect(url.port == 5432)
        #expect(url.password == nil)
    }

    @Test(
        "A malformed URL is refused with what is wrong",
        arguments: [
            ("mysql://a@h/d", "scheme"), ("postgres://h/d", "no user"), ("postgres://a@h", "one database"),
            ("postgres://a@h/d/e", "one database"), ("postgres://a@h:0/d", "port"), ("", "not a URL"),
        ])
    func malformed(_ text: String, _ problem: String) {
        #expect {
            _ = try PostgresURL(text)
        } throws: { error in
            "\(error)".hasPrefix("--database: ") && "\(error)".contains(problem)
        }
    }
}

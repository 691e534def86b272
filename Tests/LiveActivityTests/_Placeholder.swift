import Testing
@testable import LiveActivity

import Testing
@testable import Scheduling

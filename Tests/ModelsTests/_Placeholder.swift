import Testing
@testable import Models

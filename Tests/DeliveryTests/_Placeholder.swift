import Testing
@testable import Delivery

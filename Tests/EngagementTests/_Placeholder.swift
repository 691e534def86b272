import Testing
@testable import Engagement

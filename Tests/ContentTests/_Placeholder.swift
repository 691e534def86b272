import Testing
@testable import Content

/// Why the page cannot be served, in one line that says what to do.
public struct PageError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

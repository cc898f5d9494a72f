import CYAML

/// A YAML document as libyaml reads it: the tree of mappings, lists and scalars of a settings
/// file, each node with the line it starts on (for messages such as `lightorgan.yaml:12: …`).
///
/// Scalars keep their text as written (`8181`, `yes`, `~`, `""` → empty): the settings catalog
/// gives them meaning, with its own messages. Anchors and aliases are resolved; tags are ignored.
/// libyaml (Debian's libyaml-0-2) does the parsing: the same parser Yams wraps, without the
/// Foundation and ICU data Yams brings into the binary.
package indirect enum YAMLNode {
    /// A single value's text, and its 1-based line.
    case scalar(String, line: Int)
    /// A list, and the line it starts on.
    case sequence([YAMLNode], line: Int)
    /// Keys and values in the order written, and the line the mapping starts on.
    case mapping([(key: YAMLNode, value: YAMLNode)], line: Int)

    /// The line the node starts on, 1-based.
    package var line: Int {
        switch self {
        case .scalar(_, let line), .sequence(_, let line), .mapping(_, let line): line
        }
    }

    /// The text of a scalar; nil for a list or mapping.
    package var scalarText: String? {
        if case .scalar(let text, _) = self { return text }
        return nil
    }

    /// The texts of a list of scalars; nil for anything else (a scalar, a mapping, a list holding either of those).
    package var scalarList: [String]? {
        guard case .sequence(let items, _) = self else { return nil }
        let texts = items.compactMap(\.scalarText)
        return texts.count == items.count ? texts : nil
    }
}

/// Reads YAML text with libyaml.
package enum YAMLDocument {
    /// How deep lists and mappings may nest: far beyond any settings file, and a bound on the
    /// recursion for text that is garbage (`[[[[…`).
    package static let maximumDepth = 64

    /// The first document's root node; nil when the text holds none (empty, or only comments).
    ///
    /// - Throws: ``YAMLDocumentError`` with libyaml's reason and the 1-based line and column, or
    ///   when the text holds more than one document or nests deeper than ``maximumDepth``.
    package static func parse(_ text: String) throws(YAMLDocumentError) -> YAMLNode? {
        var bytes = Array(text.utf8)
        if bytes.isEmpty { bytes = [0x0A] }  // libyaml wants a buffer; an empty line is no document
        return try bytes.withUnsafeBufferPointer { (buffer) throws(YAMLDocumentError) -> YAMLNode? in
            var reader = try EventReader(buffer)
            defer { reader.close() }
            return try reader.document()
        }
    }

    /// libyaml's event parser over one buffer, which must outlive it.
    private struct EventReader {
        private var parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        private var anchors: [String: YAMLNode] = [:]

        init(_ buffer: UnsafeBufferPointer<UInt8>) throws(YAMLDocumentError) {
            guard yaml_parser_initialize(parser) == 1 else {
                parser.deallocate()
                throw YAMLDocumentError(reason: "libyaml could not start (out of memory)", line: nil, column: nil)
            }
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
        }

        mutating func close() {
            yaml_parser_delete(parser)
            parser.deallocate()
        }

        /// One event, copied out of libyaml's structure (which is freed at once).
        private enum Event {
            case streamStart, streamEnd, documentStart, documentEnd
            case alias(anchor: String, line: Int)
            case scalar(String, anchor: String?, line: Int)
            case sequenceStart(anchor: String?, line: Int)
            case sequenceEnd
            case mappingStart(anchor: String?, line: Int)
            case mappingEnd
        }

        mutating func document() throws(YAMLDocumentError) -> YAMLNode? {
            guard case .streamStart = try next() else { throw unexpected() }
            switch try next() {
            case .streamEnd: return nil
            case .documentStart: break
            default: throw unexpected()
            }
            let root = try node(from: next(), depth: 0)
            guard case .documentEnd = try next() else { throw unexpected() }
            switch try next() {
            case .streamEnd: return root
            case .documentStart:
                throw YAMLDocumentError(reason: "holds more than one document (a second `---`)", line: nil, column: nil)
            default: throw unexpected()
            }
        }

        private mutating func node(from event: Event, depth: Int) throws(YAMLDocumentError) -> YAMLNode {
            guard depth < YAMLDocument.maximumDepth else {
                throw YAMLDocumentError(
                    reason: "lists and mappings nest deeper than \(YAMLDocument.maximumDepth) levels", line: nil,
                    column: nil)
            }
            let made: YAMLNode
            let anchor: String?
            switch event {
            case .scalar(let text, let named, let line):
                made = .scalar(text, line: line)
                anchor = named
            case .alias(let name, let line):
                guard let target = anchors[name] else {
                    throw YAMLDocumentError(
                        reason: "the alias *\(name) names no anchor before it", line: line, column: nil)
                }
                return target
            case .sequenceStart(let named, let line):
                var items: [YAMLNode] = []
                while true {
                    let item = try next()
                    if case .sequenceEnd = item { break }
                    items.append(try node(from: item, depth: depth + 1))
                }
                made = .sequence(items, line: line)
                anchor = named
            case .mappingStart(let named, let line):
                var pairs: [(key: YAMLNode, value: YAMLNode)] = []
                while true {
                    let key = try next()
                    if case .mappingEnd = key { break }
                    let keyNode = try node(from: key, depth: depth + 1)
                    pairs.append((keyNode, try node(from: next(), depth: depth + 1)))
                }
                made = .mapping(pairs, line: line)
                anchor = named
            default:
                throw unexpected()
            }
            if let anchor { anchors[anchor] = made }
            return made
        }

        private mutating func next() throws(YAMLDocumentError) -> Event {
            var event = yaml_event_t()
            guard yaml_parser_parse(parser, &event) == 1 else { throw failure() }
            defer { yaml_event_delete(&event) }
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_STREAM_START_EVENT: return .streamStart
            case YAML_STREAM_END_EVENT: return .streamEnd
            case YAML_DOCUMENT_START_EVENT: return .documentStart
            case YAML_DOCUMENT_END_EVENT: return .documentEnd
            case YAML_ALIAS_EVENT: return .alias(anchor: Self.text(event.data.alias.anchor) ?? "", line: line)
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(
                    decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                return .scalar(text, anchor: Self.text(scalar.anchor), line: line)
            case YAML_SEQUENCE_START_EVENT:
                return .sequenceStart(anchor: Self.text(event.data.sequence_start.anchor), line: line)
            case YAML_SEQUENCE_END_EVENT: return .sequenceEnd
            case YAML_MAPPING_START_EVENT:
                return .mappingStart(anchor: Self.text(event.data.mapping_start.anchor), line: line)
            case YAML_MAPPING_END_EVENT: return .mappingEnd
            default: throw unexpected()
            }
        }

        private static func text(_ characters: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            characters.map { String(cString: $0) }
        }

        /// libyaml's own account of why it stopped.
        private func failure() -> YAMLDocumentError {
            let state = parser.pointee
            let reason = state.problem.map { String(cString: $0) } ?? "not YAML"
            let mark = state.problem_mark
            return YAMLDocumentError(reason: reason, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }

        private func unexpected() -> YAMLDocumentError {
            YAMLDocumentError(reason: "libyaml reported events out of order", line: nil, column: nil)
        }
    }
}

/// Text that is not YAML, with libyaml's reason and where it found the problem.
package struct YAMLDocumentError: Error, CustomStringConvertible {
    /// libyaml's words (`mapping values are not allowed in this context`).
    package let reason: String
    /// 1-based line and column, when known.
    package let line: Int?
    package let column: Int?

    package var description: String {
        switch (line, column) {
        case (let line?, let column?): "\(reason) at line \(line), column \(column)"
        case (let line?, nil): "\(reason) at line \(line)"
        default: reason
        }
    }
}

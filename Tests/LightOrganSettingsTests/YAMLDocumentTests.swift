import LightOrganSettings
import Testing

@Suite("YAML through libyaml")
struct YAMLDocumentTests {
    @Test("keeps keys in order with their lines, scalars as written, lists of scalars")
    func readsTheTree() throws {
        let root = try #require(
            try YAMLDocument.parse(
                """
                # comment
                sender:
                  port: 8181
                  hosts: [pi.local, "sacn://10.0.0.9"]
                receiver:
                  chip: ~
                  lines:
                    - 5
                    - 6
                """))
        guard case .mapping(let top, _) = root else { Issue.record("not a mapping: \(root)"); return }
        #expect(top.map { $0.key.scalarText } == ["sender", "receiver"])
        #expect(top.map(\.key.line) == [2, 5])
        guard case .mapping(let sender, _) = top[0].value, case .sequence(let hosts, _) = sender[1].value else {
            Issue.record("sender: \(top[0].value)")
            return
        }
        #expect(sender[0].value.scalarText == "8181")
        #expect(hosts.map(\.scalarText) == ["pi.local", "sacn://10.0.0.9"])
        guard case .mapping(let receiver, _) = top[1].value, case .sequence(let lines, _) = receiver[1].value else {
            Issue.record("receiver: \(top[1].value)")
            return
        }
        #expect(receiver[0].value.scalarText == "~")
        #expect(lines.map(\.scalarText) == ["5", "6"])
        #expect(lines.map(\.line) == [8, 9])
    }

    @Test("an empty text or one of comments only holds no document")
    func emptyTextHoldsNothing() throws {
        #expect(try YAMLDocument.parse("") == nil)
        #expect(try YAMLDocument.parse("# only a comment\n\n") == nil)
    }

    @Test("resolves an alias to its anchor's node")
    func resolvesAliases() throws {
        let root = try #require(try YAMLDocument.parse("a: &port 8181\nb: *port\n"))
        guard case .mapping(let pairs, _) = root else { Issue.record("not a mapping"); return }
        #expect(pairs.map(\.value.scalarText) == ["8181", "8181"])
    }

    @Test(
        "refuses what is not one plain document, with a reason and a place",
        arguments: [
            ("a: b: c\n", "mapping values are not allowed in this context at line 1, column 5"),
            ("a: [1, 2\n", "did not find expected ',' or ']' at line 2, column 1"),
            ("a: 1\n---\nb: 2\n", "holds more than one document (a second `---`)"),
            ("a: *nowhere\n", "the alias *nowhere names no anchor before it at line 1"),
            (
                String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
                "lists and mappings nest deeper than 64 levels"
            ),
        ])
    func refusesBadText(text: String, message: String) {
        #expect(throws: YAMLDocumentError.self) { try YAMLDocument.parse(text) }
        do {
            _ = try YAMLDocument.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }
}

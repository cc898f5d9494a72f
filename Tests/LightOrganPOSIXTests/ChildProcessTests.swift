import Glibc
import LightOrganCore
import LightOrganPOSIX
import Testing

@Suite("Child processes, threads and C formatting without Foundation")
struct ChildProcessTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("output, error output and status come back where they were asked to go")
    func outputAndStatus() throws {
        let script = "echo out; echo err >&2; exit 3"
        let separate = try ChildProcess.run(path: "/bin/sh", arguments: ["-c", script], errors: .separate)
        #expect(separate.termination == .exited(3))
        #expect(text(separate.output) == "out\n")
        #expect(text(separate.errors) == "err\n")
        let merged = try ChildProcess.run(path: "/bin/sh", arguments: ["-c", script], errors: .merged)
        #expect(text(merged.output).split(separator: "\n").sorted() == ["err", "out"])
        let discarded = try ChildProcess.run(path: "/bin/sh", arguments: ["-c", script])
        #expect(text(discarded.output) == "out\n")
        #expect(discarded.errors.isEmpty)
    }

    @Test("the child sees standard input, output and error only, no signal blocked, SIGPIPE at its default")
    func cleanStart() throws {
        // /proc/self/fd listed by ls itself also shows the directory it reads: 0, 1, 2 and that one.
        let descriptors = try ChildProcess.run(path: "/bin/ls", arguments: ["/proc/self/fd"])
        #expect(text(descriptors.output).split(separator: "\n").count == 4)
        let status = try ChildProcess.run(
            path: "/bin/sh", arguments: ["-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status"])
        let masks = text(status.output)
        #expect(masks.contains("SigBlk:\t0000000000000000"), "\(masks)")
        // Bit 13 is SIGPIPE: not ignored.
        let ignored = masks.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.map {
            UInt64($0.split(separator: "\t")[1], radix: 16) ?? 0
        }
        #expect((ignored ?? 1) & (1 << 12) == 0, "\(masks)")
    }

    @Test("a child past its time limit is killed, and waiting answers the same each time")
    func timeLimit() throws {
        let answer = try ChildProcess.run(path: "/bin/sleep", arguments: ["30"], timeLimit: 0.3)
        #expect(answer.termination == .signalled(9))
        let child = try ChildProcess(path: "/bin/true", arguments: [])
        #expect(child.wait() == .exited(0))
        child.kill()  // reaped: nothing to kill, and no other process hit
        #expect(child.wait() == .exited(0))
    }

    @Test("a program that is not there says so with its path")
    func missingProgram() {
        #expect(throws: ChildProcessError.self) { try ChildProcess(path: "/nonexistent/tool", arguments: []) }
        do {
            _ = try ChildProcess(path: "/nonexistent/tool", arguments: [])
        } catch {
            #expect(error.description == "cannot run /nonexistent/tool: No such file or directory")
        }
    }

    @Test("a dedicated thread runs, and a condition wakes its waiter")
    func threadAndCondition() {
        let condition = ThreadCondition()
        nonisolated(unsafe) var done = false
        DedicatedThread.start(named: "lightorgan test") {
            condition.withLock {
                done = true
                condition.signal()
            }
        }
        condition.withLock {
            let deadline = MonotonicClock.nanoseconds() + 60_000_000_000
            while !done { condition.wait(untilNanoseconds: deadline) }
        }
        #expect(done)
    }

    @Test("C formatting gives C's digits")
    func cFormat() {
        #expect(String(cFormat: "%.1f,%.1f", 1.25, -3.0) == "1.2,-3.0")
        #expect(String(cFormat: "%3d|%g", Int32(7), 0.5) == "  7|0.5")
        #expect(String(cFormat: "%.3f", 1e300).count > 300)
    }
}

import LightOrganCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads of our own for the loops that must not wait on Swift's cooperative pool: capture,
/// pacing, PWM, lighting transmitters, helpers that block on a child process.
///
/// Plain POSIX threads, so the executable needs no more than FoundationEssentials (Foundation's
/// `Thread` pulls in the whole of Foundation and ICU's data: 11 MB more in the Pi's package).
public enum DedicatedThread {
    /// Starts `body` on a new detached thread named `name` (as `top -H` and `ps -L` show it; the
    /// kernel keeps its first 15 bytes). A `timeKeeping` thread (audio read, frames paced, PWM) first
    /// asks for ``timeKeepingNice`` (see ``setNice(_:)``).
    public static func start(named name: String, timeKeeping: Bool = false, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Launch(name: name, timeKeeping: timeKeeping, body: body)).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let status = pthread_create(
            &thread, nil,
            { context in
                #if canImport(Glibc)
                let launch = Unmanaged<Launch>.fromOpaque(context!).takeRetainedValue()
                #else
                let launch = Unmanaged<Launch>.fromOpaque(context).takeRetainedValue()
                #endif
                launch.run()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Launch>.fromOpaque(context).release()
            fatalError("cannot start thread \(name): pthread_create returned \(status) (out of memory or of threads)")
        }
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
    }

    /// The nice value a time-keeping thread asks for: ahead of ordinary work (a build, a browser),
    /// not real-time, so it can never lock a machine up.
    public static let timeKeepingNice: CInt = -10

    /// Gives the calling thread nice `value` (−20…19, lower runs first), so that audio read and frames
    /// sent keep their time on a busy machine; false when not allowed (it takes root,
    /// `CAP_SYS_NICE` or an `RLIMIT_NICE` such as `@audio - nice -10` in limits.conf), and the
    /// thread keeps the process's value. Threads and processes it starts inherit it.
    @discardableResult
    public static func setNice(_ value: CInt = timeKeepingNice) -> Bool {
        // Linux keeps a nice value per thread: PRIO_PROCESS with 0 is the calling thread alone.
        setNice(value, of: 0)
    }

    /// Gives thread or process `id` (0: the calling thread) nice `value`; false when not allowed.
    static func setNice(_ value: CInt, of id: id_t) -> Bool {
        #if os(Linux)
        return setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id, value) == 0
        #else
        return setpriority(PRIO_PROCESS, id, value) == 0
        #endif
    }

    /// Blocks the calling thread for `seconds` (≥ 0; resumed after a signal until the time is up).
    public static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var remaining = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&remaining, &left) == -1, errno == EINTR { remaining = left }
    }

    /// What a new thread runs: its name, then its body.
    private final class Launch: Sendable {
        let name: String
        let timeKeeping: Bool
        let body: @Sendable () -> Void

        init(name: String, timeKeeping: Bool, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.timeKeeping = timeKeeping
            self.body = body
        }

        func run() {
            #if canImport(Glibc)
            // pthread_setname_np is a GNU extension Swift's Glibc does not show; the kernel's own file does the same.
            let descriptor = open("/proc/thread-self/comm", O_WRONLY)
            if descriptor >= 0 {
                let short = Array(name.utf8.prefix(15))
                _ = write(descriptor, short, short.count)
                close(descriptor)
            }
            #else
            pthread_setname_np(name)
            #endif
            if timeKeeping { DedicatedThread.setNice() }
            body()
        }
    }
}

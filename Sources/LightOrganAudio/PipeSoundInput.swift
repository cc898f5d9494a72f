public import LightOrganCore

#if canImport(Glibc)
import Glibc
#endif

/// The receiver's own sound as raw S16LE 44.1 kHz stereo PCM from a FIFO it makes
/// (`receiver.sound: pipe:PATH`): what librespot / raspotify write with
/// `--backend pipe --device PATH` (Spotify Connect), and shairport-sync with its pipe backend.
///
/// The FIFO is made group `audio`, mode 0660, so a player in that group writes it. It is opened for
/// reading and writing, so a writer that closes it and opens it again (a new
/// song, librespot restarted) is no end: the stream pauses (reads time out) and goes on when the
/// writer writes again. Its folder must exist and be writable (the service's is /run/lightorgan).
public final class PipeSoundInput: OwnSoundInput, @unchecked Sendable {
    // @unchecked Sendable: the reader (one thread) owns the descriptor's reads and the buffer;
    // `close` from another thread only closes the wake-up pipe's end.
    public let format = AudioFormat(sampleRate: 44_100, channels: 2)
    public let label: String
    /// The FIFO's path.
    public let path: String
    private let reader: DescriptorReader

    /// Makes the FIFO at `path` (mode 0660) unless one is there, and opens it.
    ///
    /// - Throws: ``AudioInputError``, one line: the folder is missing or not writable, or `path`
    ///   is something other than a FIFO.
    public init(path: String) throws {
        self.path = path
        label = "pipe \(path)"
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFIFO else {
                throw AudioInputError(
                    "receiver.sound = pipe:\(path): \(path) exists and is not a FIFO; remove it, or name another path")
            }
        } else if mkfifo(path, 0o660) != 0 {
            let code = errno
            let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            let why =
                code == ENOENT
                ? "its folder \(folder.isEmpty ? "/" : folder) does not exist; create it, or name a path in one that does (the service's is /run/lightorgan)"
                : code == EACCES || code == EPERM
                    ? "this user may not write in \(folder.isEmpty ? "/" : folder); name a path in a folder it owns (the service's is /run/lightorgan)"
                    : String(cString: strerror(code))
            throw AudioInputError("receiver.sound = pipe:\(path): cannot make the FIFO: \(why)")
        }
        // Group audio, 0660 (whatever the umask): a player in group audio (raspotify's librespot) writes it.
        if let audio = getgrnam("audio") { _ = chown(path, uid_t.max, audio.pointee.gr_gid) }
        _ = chmod(path, 0o660)
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AudioInputError(
                "receiver.sound = pipe:\(path): cannot open the FIFO: \(String(cString: strerror(errno)))")
        }
        reader = DescriptorReader(descriptor: descriptor, owned: true, channels: 2, what: "the pipe \(path)")
    }

    public func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        try reader.read(frames: frames, timeoutMilliseconds: timeoutMilliseconds)
    }

    public func close() { reader.close() }
}

/// Reads interleaved S16LE sample frames from a descriptor with a timeout, keeping a partial frame
/// for the next read; `close()` from any thread ends a waiting read at once (a self-pipe).
final class DescriptorReader: @unchecked Sendable {
    // @unchecked Sendable: `read` is called by one thread; `close` only writes to the wake-up pipe.
    private let descriptor: CInt
    private let owned: Bool
    private let frameBytes: Int
    private let what: String
    private var wake: [CInt] = [-1, -1]
    private var pending: [UInt8] = []
    private var buffer: [UInt8] = []

    init(descriptor: CInt, owned: Bool, channels: Int, what: String) {
        (self.descriptor, self.owned, self.what) = (descriptor, owned, what)
        frameBytes = 2 * channels
        // pipe2 is a GNU extension Swift's Glibc does not show: pipe, then the flags.
        if pipe(&wake) == 0 {
            for end in wake {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
        }
    }

    deinit {
        if owned { Glibc.close(descriptor) }
        Glibc.close(wake[0])
        Glibc.close(wake[1])
    }

    func close() {
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
    }

    func read(frames: Int, timeoutMilliseconds: Int) throws -> [Int16]? {
        let capacity = frames * frameBytes
        if buffer.count < capacity { buffer = [UInt8](repeating: 0, count: capacity) }
        while true {
            var waiting = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&waiting, 2, CInt(timeoutMilliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                throw AudioInputError("cannot wait for \(what): \(String(cString: strerror(errno)))")
            }
            if waiting[1].revents != 0 { return [] }
            if ready == 0 { return nil }
            let room = capacity - pending.count
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, room) }
            if count == 0 { return [] }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw AudioInputError("cannot read \(what): \(String(cString: strerror(errno)))")
            }
            pending.append(contentsOf: buffer[0..<count])
            let whole = pending.count / frameBytes * frameBytes
            guard whole > 0 else { continue }
            let samples = pending.withUnsafeBytes { bytes in
                (0..<whole / 2).map { Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
            }
            pending.removeFirst(whole)
            return samples
        }
    }
}

"""A real headless Chromium for the receiver's page: Debian's `chromium` + `chromium-driver` (the
`browser` marker's packages), driven by selenium (Tests/System/requirements.txt), and the receiver
behind a veth that it talks to.

The page tests' rules: the receiver runs in a network namespace of its own behind a veth (`page_host`:
10.77.1.2 there, 10.77.1.1 here), with `--output stdout`, so every frame it shows is a line "MONOTONIC_TIME BASS
MID TREBLE"; the browser stays in the test's namespace (`netns`). A recorder injected into every page
(web/recorder.js, before the page's own scripts, through the DevTools protocol) keeps each lamp message with
Date.now(), and each sound message the page sends. CLOCK_MONOTONIC and the wall clock are both the kernel's, read
here to put both on one time line (`shown`).

- `Browser(fake_audio=None, loop=True, args=(), log_dir=...)`: `.open(url)`, `.js(script, *args)`
  (execute_script: `return` what you want back), `.wait_for(js_expression, timeout)` (its first truthy
  value; TimeoutError with the last console lines), `.click(css)` (a trusted click: a user gesture),
  `.phone_viewport()`, `.screenshot(path)` → (width, height), `.console_log()`, `.driver`, `.close()`.
  fake_audio: a WAV the fake microphone plays (getUserMedia and getDisplayMedia are granted without a
  prompt); loop=False appends "%noloop". args: more Chromium flags.
- `PageHost(start, folder)`: a `Peer` namespace at 10.77.1.2 (10.77.1.1 here, veth pgveth) where
  `.receiver(name, …)` runs `lightorgan receive --output stdout` (port 8181, page on 8443) and returns
  it with the key of the logged `#key=` link; `.close()` stops them and ends the namespace.
- `counter_sender(spawn, name, host)`: a `--pattern counter` sender to that receiver (frame ages).
- `open_page(browser, base, key)` with the recorder of web/recorder.js injected before the page's own
  scripts; `shown(receiver)` (the receiver's stdout lines on the wall clock), `gone_dark(page, receiver)`; `handshake`, `websocket`
  (a minimal RFC 6455 client), `stalled_pages`, `reading_pages`; `slide(page, key, value)` and `tap(page, css)`,
  as a person moves a setting's slider or taps; `quit_all(browsers)`.

Network namespaces (measured)
  chromedriver listens on 127.0.0.1 and Chromium's DevTools connection is over loopback too, so
  in a fresh namespace lo must be up first: with lo down chromedriver logs "bind() failed: Cannot
  assign requested address (99)" and selenium waits 30 s for "Can not connect to the Service"
  (Browser() checks loopback first and fails at once). With `ip link set lo up` both work as in the
  root namespace (about 1.2 s to a ready browser). The selenium client must share chromedriver's
  namespace (it connects to 127.0.0.1:PORT), and Chromium is chromedriver's child, so the browser
  runs in the test's namespace (quit it before leaving that namespace); the server runs in a Peer and
  the page is opened at https://10.77.1.2:PORT/ over the veth (a non-loopback origin).

What Chromium 156 headless does here (2 cores, no sound card, no PulseAudio)
  - https://10.77.1.2 with a self-signed certificate and --ignore-certificate-errors: no
    interstitial, isSecureContext is true, so getUserMedia, AudioWorklet and wss:// all work.
  - Without --use-fake-ui-for-media-stream, getUserMedia and getDisplayMedia never settle (a
    permission prompt nobody answers: no error either). With it (fake_audio=...) both are granted.
    getDisplayMedia is a function in headless mode and, with the fake UI, returns a stream (video
    "screen:-3:0", audio "Fake audio").
  - The fake microphone: label "Fake Default Audio Input", track settings sampleRate 44100,
    channelCount 2 (channelCount: 1 is not honoured: read channel 0), latency 0.01,
    echoCancellation/noiseSuppression/autoGainControl false as asked. A 48 kHz WAV is resampled
    (440 Hz arrives as 440 Hz, amplitude 0.5 as 0.5, burst RMS 0.35). The file starts playing when
    getUserMedia starts the capture: what plays before the worklet is connected (50-90 ms) is
    lost, and the first 20-50 ms of blocks are zeros; in some runs one block came, then 8-11 render
    quanta with no input channel (inputs[0] empty: currentFrame jumps 1024-1536), then steady.
  - Looping: the WAV loops by default (on/off pattern repeats after its end). "%noloop" is not
    needed, but useful for a clip heard once (loop=False): it plays once, then silence; the track
    stays "live" (no ended event). The fake device without a file plays beeps (RMS 0.14).
  - new AudioContext() runs at 44100 Hz (baseLatency 0.01 s; "playback" hint: 0.0232 s);
    new AudioContext({sampleRate: 48000}) runs at 48000 (the 44.1 kHz capture is resampled).
    A context made without a user gesture is "suspended"; one made in a click() handler runs.
  - An AudioWorkletNode with numberOfOutputs: 0, not connected to the destination, is processed.
    Blocks are 128 frames with contiguous currentFrame after the start; the render thread runs
    every ~10 ms (441 frames at 44.1 kHz, baseLatency 0.01), so port messages arrive in batches of
    3-4 blocks ~9.7 ms apart (p99 gap 11-18 ms; up to 17 blocks / 83 ms when the machine is busy);
    relative to the audio clock a block reaches the main thread p50 5-6 ms, p99 10-13 ms after the
    earliest one (p99 45 ms under load). Click to first block 0.2-0.45 s (getUserMedia 0.15-0.4 s).
    A block sent over wss:// from the main thread reaches the server p50 0.6 ms, p99 4-7 ms later.
  - phone_viewport() (Emulation.setDeviceMetricsOverride, mobile) + screenshot: a 1170×2532 PNG
    (CSS 390×844 at devicePixelRatio 3). The page needs <meta name=viewport
    content="width=device-width"> or the mobile layout viewport is 980 px wide. The window size
    (default 780×437 CSS here) does not set the screenshot size; this does.
  - Debian's /usr/bin/chromium launcher adds its /etc/chromium.d flags and prints a harmless
    "[: …: unexpected operator" (its /dev/shm size test); --headless=new, --no-sandbox (root),
    --disable-gpu and --ignore-certificate-errors were all that was needed; nothing broke.
  - selenium 4.52.0 could not be installed here (it wants certifi >= 2026.10.23, which the
    package index does not have); 4.51.0 works. The driver path is given, so Selenium Manager
    never downloads anything.
"""
import base64
import json
import os
import shutil
import socket
import ssl
import struct
import tempfile
import threading
import time

from selenium import webdriver
from selenium.webdriver.common.by import By

from support.namespaces import Peer, run
from support.processes import wait_for

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors")
FAKE_MEDIA_FLAGS = ("--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream")
WEB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "web")


def web_file(name):
    """The text of Tests/System/web/NAME (the pages and scripts the tests give the browser)."""
    with open(os.path.join(WEB, name)) as file:
        return file.read()


def _loopback_works():
    """Whether a TCP connection over 127.0.0.1 works in this network namespace."""
    try:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            with socket.create_connection(listener.getsockname(), timeout=1):
                return True
    except OSError:
        return False


# -- the browser ----------------------------------------------------------------------------------

class Browser:
    """Headless Chromium through /usr/bin/chromedriver, in the caller's network namespace; its
    chromedriver.log in `log_dir`."""

    def __init__(self, log_dir, fake_audio=None, loop=True, args=()):
        if not _loopback_works():
            raise RuntimeError("loopback does not work in this network namespace (chromedriver needs it): "
                               "run `ip link set lo up` first")
        options = webdriver.ChromeOptions()
        flags = list(FLAGS)
        if fake_audio:
            flags += [*FAKE_MEDIA_FLAGS, "--use-file-for-fake-audio-capture="
                      + os.path.abspath(fake_audio) + ("" if loop else "%noloop")]
        for flag in flags + list(args):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.log_dir = log_dir
        os.makedirs(self.log_dir, exist_ok=True)
        self.driver_log = os.path.join(self.log_dir, "chromedriver.log")
        # TMPDIR: Chromium's temporary profile and its org.chromium.Chromium.* folder (left behind after
        # quit()) go into a folder of this browser's, removed by close(). A short one: Chromium's
        # SingletonSocket path must fit a socket address (108 bytes), or it exits at once ("Socket path
        # too long") and selenium says only "session not created: Chrome instance exited".
        self.temporary = tempfile.mkdtemp(prefix="lightorgan-chromium-")
        service = webdriver.ChromeService(executable_path=CHROMEDRIVER, log_output=self.driver_log,
                                          env=dict(os.environ, TMPDIR=self.temporary))
        self.driver = None
        try:
            self.driver = webdriver.Chrome(options=options, service=service)
        except Exception as error:
            service.stop()
            shutil.rmtree(self.temporary, ignore_errors=True)
            raise RuntimeError(f"Chromium did not start ({error}); see {self.driver_log}") from error
        self._console = []

    def open(self, url):
        """Loads `url` and waits for its load event."""
        self.driver.get(url)

    def js(self, script, *args):
        """Runs `script` as a function body in the page (arguments[0…] = args); returns what it
        returns (JSON-like values; a Promise is not awaited)."""
        return self.driver.execute_script(script, *args)

    def wait_for(self, predicate, timeout=10.0, interval=0.05):
        """Polls the JavaScript expression `predicate` until it is truthy; returns that value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.driver.execute_script(f"return ({predicate});")
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{predicate!r} not true after {timeout} s; console: "
                                   f"{[entry['message'] for entry in self.console_log()[-5:]]}")
            time.sleep(interval)

    def click(self, css):
        """A trusted click on the first element matching `css` (it counts as a user gesture)."""
        self.driver.find_element(By.CSS_SELECTOR, css).click()

    def phone_viewport(self, width=390, height=844, scale=3, touch=True):
        """Emulates a phone screen (CSS width × height at devicePixelRatio `scale`, mobile, touch
        events when `touch`): screenshots become (width·scale)×(height·scale) pixels."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": scale, "mobile": True})
        self.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {
            "enabled": bool(touch), "maxTouchPoints": 5 if touch else 0})

    def screenshot(self, path):
        """Saves the viewport as a PNG; returns its (width, height) in pixels."""
        if not self.driver.save_screenshot(path):
            raise RuntimeError(f"screenshot to {path} failed")
        return png_size(path)

    def console_log(self):
        """Every browser console entry since the start (chromedriver hands each out once; kept here):
        [{level, message, source, timestamp}]: console.* calls, uncaught errors, failed loads."""
        self._console.extend(self.driver.get_log("browser"))
        return list(self._console)

    def close(self):
        """Quits Chromium and chromedriver (again: nothing); log_dir keeps chromedriver.log."""
        driver, self.driver = self.driver, None
        if driver is None:
            return
        try:
            driver.quit()
        finally:
            driver.service.stop()  # chromedriver itself, should quit() have failed half-way
            shutil.rmtree(self.temporary, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()


def png_size(path):
    """(width, height) of a PNG file, from its IHDR chunk."""
    with open(path, "rb") as file:
        head = file.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def quit_all(browsers):
    """Quits each browser (or engine), the others still when one fails."""
    for started in browsers:
        try:
            started.close()
        except Exception as error:  # the others still quit
            print(f"browser {getattr(started, 'name', None) or started.log_dir} did not quit cleanly: {error}")


# -- the receiver behind a veth, and its page -----------------------------------------------------

LINK_PORT = 8181
PAGE_PORT = 8443


class PageHost:
    """The receiver's host, as a phone sees it: a Peer namespace at 10.77.1.2 behind the veth pair
    pgveth (10.77.1.1 on this side, where the browser and senders run). `start(name, *arguments,
    wrapper=, env=)` starts the executable as a Process (the `spawn` fixture, or its like)."""

    def __init__(self, start, folder, address="10.77.1.2", test_address="10.77.1.1", veth="pgveth"):
        self.start, self.folder = start, folder
        self.peer = Peer(address, test_address, veth)
        # No IPv6 on this side of the veth: its link-local address would turn from tentative to valid a
        # second or two later (duplicate address detection), and Chromium, started by then, takes that
        # change of its namespace's addresses for a new network and fails the page's load with
        # ERR_NETWORK_CHANGED ("Your connection was interrupted"). Removed now, before any browser starts.
        try:
            run("sysctl", "-qw", f"net.ipv6.conf.{self.peer.test_veth}.disable_ipv6=1")
        except BaseException:
            self.peer.close()
            raise
        self.address = address
        self.base = f"https://{address}:{PAGE_PORT}"
        self.processes = []

    def receiver(self, name, *extra, state=None, env=None):
        """`lightorgan receive --output stdout` inside, its state in `state` (default: FOLDER/state-NAME), `env`
        added to its environment, every frame it shows a line "MONOTONIC_TIME BASS MID TREBLE"; (process, key of
        its link)."""
        state = state or os.path.join(self.folder, f"state-{name}")
        process = self.start(name, "receive", "--output", "stdout", "--port", str(LINK_PORT), "--stats-interval", "0",
                             *extra, wrapper=self.peer.wrapper,
                             env={"STATE_DIRECTORY": state, "LIGHTORGAN_PAGE_PORT": str(PAGE_PORT), **(env or {})})
        self.processes.append(process)
        if not wait_for(lambda: "#key=" in process.log(), 30):
            raise RuntimeError(f"the receiver logged no page address: {process.log()[-800:]}")
        line = next(line for line in process.log().splitlines() if "#key=" in line)
        return process, line.split("#key=")[1].split()[0]

    def close(self):
        """Stops every receiver started here, then ends the namespace."""
        try:
            for process in reversed(self.processes):
                process.stop(timeout=3)
        finally:
            self.peer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()


def counter_sender(spawn, name, host, *extra):
    """`lightorgan send --pattern counter` at 100 frames/s to the receiver of `host` (a PageHost), started by
    `spawn` (the fixture, or its like) as NAME, without statistics lines: its frames' ages tell the page's cost."""
    return spawn(name, "send", "--pattern", "counter", "--fps", "100", "--host", host.address, "--port", "8181",
                 "--stats-interval", "0", *extra)


def open_page(browser, base, key="", phone=True):
    """Opens the page at `base` (signed in by `#key=KEY` when given) with the recorder of
    web/recorder.js injected before its own scripts, in a phone's viewport unless `phone` is False;
    waits for the page's first status."""
    browser.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": web_file("recorder.js")})
    if phone:
        browser.phone_viewport()
    browser.open(f"{base}/" + (f"#key={key}" if key else ""))
    try:
        browser.wait_for("window.lightorgan && window.lightorgan.status", 45)
    except TimeoutError:
        seen = browser.js("return JSON.stringify({lightorgan: window.lightorgan, text: document.body.innerText.slice(0, 300)})")
        raise TimeoutError(f"no status on the page after 45 s: {seen}")


def shown(process, since_wall=0.0):
    """[(wall time, (b, m, t))] of a `--output stdout` receiver's lines from `since_wall` on: its
    CLOCK_MONOTONIC times moved onto the wall clock the browser's Date.now() reads (both the kernel's)."""
    wall_offset = time.time() - time.monotonic()
    frames = []
    for fields in process.lines():
        if len(fields) == 4:
            at = float(fields[0]) + wall_offset
            if at >= since_wall:
                frames.append((at, (int(fields[1]), int(fields[2]), int(fields[3]))))
    return frames


# How long a test waits after Stop for the page to say nobody sends and the receiver to show dark. The wait ends as
# soon as both hold; its length is room for a busy machine, not the code's budget: beside two CPU hogs the browser
# took over 1.5 s to act on the click (the lamps still lit then, measured), while the receiver goes dark on the
# sender's goodbye or receiver.timeout (1 s) after its last frame, which test_link times on the receiver's clock.
DARK_AFTER_STOP_S = 10


def gone_dark(page, process, timeout=DARK_AFTER_STOP_S):
    """Waits up to `timeout` s until `page` (any engine's, its status shown) says nobody sends and the receiver
    `process` has shown a dark frame last; whether both are so by then."""
    def dark():
        frames = shown(process)
        return bool(frames) and frames[-1][1] == (0, 0, 0) and page.js(
            "return !!window.lightorgan.status && window.lightorgan.status.sender === null")
    return wait_for(dark, timeout)


def handshake(address, path, origin, receive_buffer=None):
    """A TLS connection to the page's port at `address` that asked to upgrade `path` with `origin`
    (RFC 6455): (connection, the response's head and whatever followed it)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((address, PAGE_PORT), timeout=10)
    if receive_buffer:
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    connection = context.wrap_socket(raw, server_hostname=address)
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET {path} HTTP/1.1\r\nHost: {address}:{PAGE_PORT}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                        f"Origin: {origin}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(4096)
        if not chunk:
            break
        head += chunk
    return connection, head


def send_frame(connection, opcode, payload):
    """One masked WebSocket frame (RFC 6455: a client masks every frame), FIN set."""
    mask = os.urandom(4)
    length = len(payload)
    header = bytes([0x80 | opcode]) + (bytes([0x80 | length]) if length < 126 else
                                       bytes([0x80 | 126]) + struct.pack(">H", length) if length < 65536 else
                                       bytes([0x80 | 127]) + struct.pack(">Q", length))
    connection.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


VIEW_ONLY_HELLO = b'{"type":"hello","key":""}'


def websocket(address, path, origin, first=None, then=()):
    """A minimal WebSocket client (masked frames): sends `first` (text) and `then` (binary) and
    returns (101, the close frame's (code, reason) or None), or (the HTTP status, None) when refused."""
    connection, head = handshake(address, path, origin)
    status = int(head.split(b" ", 2)[1]) if head else 0
    if status != 101:
        connection.close()
        return status, None

    if first is not None:
        send_frame(connection, 1, first.encode() if isinstance(first, str) else first)
    for payload in then:
        send_frame(connection, 2, payload)
    for opcode, payload in server_frames(connection, head, timeout=10):
        if opcode == 8:
            connection.close()
            return 101, (struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None,
                         payload[2:].decode(errors="replace"))
    connection.close()
    return 101, None


def server_frames(connection, head, timeout):
    """The server's frames on `connection` (after the handshake's `head`), as (opcode, payload), until it closes
    or `timeout` seconds pass."""
    buffer = head.split(b"\r\n\r\n", 1)[1]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while len(buffer) >= 2:
            length = buffer[1] & 0x7f
            start = 2 + (2 if length == 126 else 8 if length == 127 else 0)
            if len(buffer) < start:
                break
            if length == 126:
                length = struct.unpack(">H", buffer[2:4])[0]
            elif length == 127:
                length = struct.unpack(">Q", buffer[2:10])[0]
            if len(buffer) < start + length:
                break
            opcode, payload, buffer = buffer[0] & 0x0f, buffer[start:start + length], buffer[start + length:]
            yield opcode, payload
        try:
            chunk = connection.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionError, ssl.SSLError):
            return
        if not chunk:
            return
        buffer += chunk


def page_status(address, key, send=(), timeout=10):
    """The receiver's status as its page gets it: /live signed in with `key`, then each message of `send` (dicts,
    as the page sends them: `{"type": "set", "id": 1, "key": …, "value": …}`); the first `status` message after
    them (a dict)."""
    connection, head = handshake(address, "/live", f"https://{address}:{PAGE_PORT}")
    try:
        for message in ({"type": "hello", "key": key}, *send):
            send_frame(connection, 1, json.dumps(message).encode())
        connection.settimeout(1)
        # The replies to what was sent come first: closing before them could lose it (a reset drops what the
        # receiver has not read yet).
        waiting = {message["id"] for message in send if "id" in message}
        for opcode, payload in server_frames(connection, head, timeout):
            if opcode == 1:
                message = json.loads(payload)
                waiting.discard(message.get("id"))
                if message.get("type") == "status" and not waiting:
                    return message
        raise RuntimeError("the page got no status")
    finally:
        connection.close()


def stalled_pages(address, count):
    """`count` view-only /live sockets (hello without a key, as a page without the link) that never
    read after it: their server must skip, not queue."""
    pages = []
    for _ in range(count):
        connection = handshake(address, "/live", f"https://{address}:{PAGE_PORT}", receive_buffer=4096)[0]
        send_frame(connection, 1, VIEW_ONLY_HELLO)
        pages.append(connection)
    return pages


def reading_pages(address, count):
    """`count` /live sockets that read everything, as open pages do (a thread each); returns
    close(), which stops them and returns the bytes each received."""
    sockets = stalled_pages(address, count)
    stop = threading.Event()
    received = [0] * count

    def drain(index, connection):
        connection.settimeout(0.5)
        while not stop.is_set():
            try:
                chunk = connection.recv(65536)
            except (socket.timeout, ssl.SSLError):
                continue
            except OSError:
                return
            if not chunk:
                return
            received[index] += len(chunk)

    threads = [threading.Thread(target=drain, args=(i, c), daemon=True) for i, c in enumerate(sockets)]
    for thread in threads:
        thread.start()

    def close():
        stop.set()
        for thread in threads:
            thread.join(2)
        for connection in sockets:
            connection.close()
        return received
    return close


# -- what a person does on the page ------------------------------------------------------------

def slide(page, key, value, typed=False):
    """Moves the slider of `key` to `value` as a person's finger does (input events, no button), or
    types `value` into its field; the page applies it once the movement pauses."""
    part = ".value" if typed else "input[type=range]"
    page.js(f"const i = document.querySelector('[data-key=\"{key}\"] {part}'); i.focus(); "
            f"for (const v of [arguments[0] - 1, arguments[0]]) {{ i.value = String(v); i.dispatchEvent(new Event('input')); }} i.blur()",
            value)


def tap(page, css):
    """A click on `css` where a person would tap it: scrolled to the middle of the screen first (at the top of a
    phone's screen the lamp strip covers what is under it)."""
    page.js("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", css)
    page.click(css)

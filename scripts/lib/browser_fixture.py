"""A real headless Chromium for tests of lightorgan's browser page (HTTPS, WebSocket, microphone
through an AudioWorklet): Debian's `chromium` + `chromium-driver` 156, driven by selenium.

Usage, from a test script run by root (re-executed under `unshare --net --mount` like
scripts/test-lighting; apt and pip need the network, so install first):

    import browser_fixture
    if os.environ.get("TEST_X_IN_NAMESPACE") != "1":
        browser_fixture.ensure_browser()          # before unshare: apt-get / pip need the network
        os.environ["TEST_X_IN_NAMESPACE"] = "1"
        os.execvp("unshare", ["unshare", "--net", "--mount", sys.executable, *sys.argv])
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)    # chromedriver needs it
    with browser_fixture.Namespace() as ns:                          # 10.77.1.1 here, 10.77.1.2 there
        server = ns.popen([lightorgan, "receive", ...])              # the server behind the veth
        with browser_fixture.Browser(fake_audio="tone.wav") as browser:
            browser.open(f"https://{ns.address}:8443/")
            browser.click("#start")
            browser.wait_for("window.samples > 44100", timeout=10)
            browser.phone_viewport(); browser.screenshot("phone.png")   # 1170×2532 PNG

`python3 scripts/lib/browser_fixture.py --selftest` proves all of this with a throw-away HTTPS +
WebSocket server (last line "browser: N passed, N failed").

API
  ensure_browser()       installs what is missing: apt-get install --no-install-recommends chromium
                         chromium-driver (apt-get update and again when that fails) and selenium
                         SELENIUM into VENV (~/.cache/lightorgan/venv-browser, python3 -m venv + pip;
                         LIGHTORGAN_BROWSER_VENV overrides). About 10 ms when all is there (no
                         subprocess); venv + pip ~16 s; apt ~25 s. Needs the network: call it before
                         `unshare --net` (inside, it only works when nothing is missing).
  Browser(fake_audio=None, loop=True, args=(), log_dir=None)    a context manager
      fake_audio: a WAV the fake microphone plays (getUserMedia and getDisplayMedia are granted
      without a prompt); loop=False appends "%noloop". args: more Chromium flags.
    .open(url)  .js(script, *args) -> value (execute_script: `return` what you want back)
    .wait_for(js_expression, timeout=10) -> its first truthy value (polls every 50 ms; TimeoutError
        with the last console lines)
    .click(css)  .phone_viewport(width=390, height=844, scale=3, touch=True)
    .screenshot(path) -> (width, height) of the PNG  .console_log() -> [{level, message, source,
        timestamp}] since the start (every console.* call, uncaught errors, failed loads)
    .driver (the selenium WebDriver), .log_dir (log_dir, or a new /tmp/lightorgan-browser-*),
    .driver_log (LOG_DIR/chromedriver.log), .close() (quits; Chromium's temporary files go under
    log_dir through TMPDIR, and the org.chromium.Chromium.* folder it leaves there is removed)
  Namespace(address="10.77.1.2", test_address="10.77.1.1", veth="brveth")   a context manager
      a network namespace behind a veth pair (harness.veth_namespace, as ola_fixture.Olad's;
      10.77.1.x so that both can live in one test). .address, .test_address, .test_veth, .wrapper (nsenter prefix),
      .popen(command, **popen_args) (inside, killed when this thread ends), .stop()
  write_tone_wav(path, rate, [(seconds, on), ...], frequency=440, amplitude=0.5), png_size(path)

Network namespaces (measured)
  chromedriver listens on 127.0.0.1 and Chromium's DevTools connection is over loopback too, so
  in a fresh namespace (`unshare --net`, `ip netns exec`) lo must be up first: with lo down
  chromedriver logs "bind() failed: Cannot assign requested address (99)" and selenium waits 30 s
  for "Can not connect to the Service" (Browser() checks loopback first and fails at once). With
  `ip link set lo up` both work as in the root namespace (about 1.2 s to a ready browser).
  The selenium client must share chromedriver's namespace (it connects to 127.0.0.1:PORT), and
  Chromium is chromedriver's child, so the browser runs in the test's namespace; put the server
  in a Namespace and open https://10.77.1.2:PORT/ over the veth (a non-loopback origin).

What Chromium 156 headless does here (selftest; 2 cores, no sound card, no PulseAudio)
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
import array
import base64
import glob
import hashlib
import itertools
import json
import math
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave

from harness import veth_namespace

SELENIUM = "4.51.0"
VENV = os.environ.get("LIGHTORGAN_BROWSER_VENV", os.path.expanduser("~/.cache/lightorgan/venv-browser"))
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors")
FAKE_MEDIA_FLAGS = ("--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream")


# -- installation ---------------------------------------------------------------------------------

def _venv_on_path():
    """Puts the venv's site-packages on sys.path, as ddp_reference.py does for its venv: selenium and
    its dependencies are pure Python, so any Python 3.11 (pyenv's or /usr/bin's) loads them."""
    for folder in glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages")):
        if folder not in sys.path:
            sys.path.append(folder)


def _selenium():
    """The selenium.webdriver module, or None when it cannot be imported."""
    _venv_on_path()
    try:
        from selenium import webdriver
        return webdriver
    except ImportError:
        for name in [name for name in sys.modules if name == "selenium" or name.startswith("selenium.")]:
            del sys.modules[name]
        return None


def ensure_browser():
    """Installs what is missing (see the module doc); returns at once when everything is there."""
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        apt = ["apt-get", "-o", "DPkg::Lock::Timeout=300", "-q"]
        install = [*apt, "install", "-y", "--no-install-recommends", "chromium", "chromium-driver"]
        if subprocess.run(install, env=env).returncode != 0:
            subprocess.run([*apt, "update"], env=env, check=True)
            subprocess.run(install, env=env, check=True)
    if _selenium() is None:
        if not os.path.exists(os.path.join(VENV, "bin", "python")):
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([os.path.join(VENV, "bin", "python"), "-m", "pip", "install", "--quiet",
                        f"selenium=={SELENIUM}"], check=True)
        if _selenium() is None:
            raise ImportError(f"selenium is still not importable from {VENV}")


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
    """Headless Chromium through /usr/bin/chromedriver, in the caller's network namespace."""

    def __init__(self, fake_audio=None, loop=True, args=(), log_dir=None):
        webdriver = _selenium()
        if webdriver is None:
            raise ImportError("selenium is not installed: call browser_fixture.ensure_browser() first")
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
        self.log_dir = log_dir or tempfile.mkdtemp(prefix="lightorgan-browser-")
        os.makedirs(self.log_dir, exist_ok=True)
        self.driver_log = os.path.join(self.log_dir, "chromedriver.log")
        # TMPDIR: Chromium's temporary profile and its /tmp/org.chromium.Chromium.* folder (left behind
        # after quit()) go into log_dir instead of /tmp.
        service = webdriver.ChromeService(executable_path=CHROMEDRIVER, log_output=self.driver_log,
                                          env=dict(os.environ, TMPDIR=self.log_dir))
        try:
            self.driver = webdriver.Chrome(options=options, service=service)
        except Exception as error:
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
        from selenium.webdriver.common.by import By
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
        """Every browser console entry since the start (chromedriver hands each out once; kept here)."""
        self._console.extend(self.driver.get_log("browser"))
        return list(self._console)

    def close(self):
        """Quits Chromium and chromedriver; log_dir keeps chromedriver.log."""
        if self.driver is not None:
            self.driver.quit()
            self.driver = None
            for folder in glob.glob(os.path.join(self.log_dir, "org.chromium.Chromium.*")):
                shutil.rmtree(folder, ignore_errors=True)

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


# -- a second network namespace for the server ----------------------------------------------------

class Namespace:
    """A network namespace behind a veth pair (harness.veth_namespace): `test_address` on `test_veth` here,
    `address` on the other side, lo up on both. The browser stays here, beside the selenium client."""

    def __init__(self, address="10.77.1.2", test_address="10.77.1.1", veth="brveth"):
        self.address, self.test_address = address, test_address
        self.test_veth, self.veth = veth + "0", veth + "1"
        self.holder = veth_namespace(self.test_veth, self.veth, test_address, address)

    @property
    def wrapper(self):
        """Command prefix that runs a command inside the namespace."""
        return ["nsenter", f"--net=/proc/{self.holder.pid}/ns/net"]

    def popen(self, command, **popen_args):
        """subprocess.Popen of `command` inside the namespace, killed when this thread ends."""
        return subprocess.Popen([*self.wrapper, "setpriv", "--pdeathsig", "KILL", *command], **popen_args)

    def stop(self):
        """Ends the namespace (its veth pair goes with it); processes inside keep running."""
        if self.holder is not None and self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait()
        self.holder = None

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()


def write_tone_wav(path, rate, bursts, frequency=440.0, amplitude=0.5):
    """A 16-bit mono WAV: `bursts` is [(seconds, on)]; a sine of `frequency` at `amplitude` (full
    scale 1) where on, silence elsewhere."""
    samples = array.array("h")
    for seconds, on in bursts:
        for i in range(len(samples), len(samples) + int(seconds * rate)):
            samples.append(round(32767 * amplitude * math.sin(2 * math.pi * frequency * i / rate)) if on else 0)
    with wave.open(path, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(samples.tobytes())


# -- self-test: a throw-away HTTPS + WebSocket server and a capture page ---------------------------

PAGE = """<!doctype html>
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>browser_fixture self-test</title>
<button id="start" style="font-size: 32px">Start</button> <button id="display">Screen</button>
<p id="status">idle</p>
<script>
const S = window.selftest = {secure: isSecureContext, displayMedia: typeof navigator.mediaDevices?.getDisplayMedia,
  error: null, sampleRate: 0, samples: 0, sumSquares: 0, blockSizes: {}, channels: {}, frames: [], arrivals: [],
  blockRms: [], sentAt: [], wsSent: 0, timeOrigin: performance.timeOrigin, trackEnded: null, display: null};
const rate = Number(new URLSearchParams(location.search).get("rate")) || undefined;
console.log("selftest page loaded");
document.getElementById("display").onclick = () => navigator.mediaDevices.getDisplayMedia({video: true, audio: true})
  .then(s => { S.display = "stream: " + s.getTracks().map(t => t.kind + " " + t.label).join(", "); },
        e => { S.display = `${e.name}: ${e.message}`; });
document.getElementById("start").onclick = async () => {
  try {
    S.clicked = performance.now();
    const stream = await navigator.mediaDevices.getUserMedia({audio: {echoCancellation: false,
      noiseSuppression: false, autoGainControl: false, channelCount: 1}});
    S.gotStream = performance.now();
    const track = S.track = stream.getAudioTracks()[0];
    S.label = track.label; S.settings = track.getSettings();
    track.onended = () => { S.trackEnded = performance.now(); };
    const context = new AudioContext({sampleRate: rate});
    S.sampleRate = context.sampleRate; S.baseLatency = context.baseLatency;
    await context.audioWorklet.addModule("/worklet.js");
    const ws = new WebSocket(`wss://${location.host}/ws`);
    ws.onerror = () => { S.error = "websocket error"; };
    ws.onclose = () => { S.wsClosed = true; };
    const node = new AudioWorkletNode(context, "capture", {numberOfInputs: 1, numberOfOutputs: 0});
    context.createMediaStreamSource(stream).connect(node);
    node.port.onmessage = ({data: {frame, channels, block}}) => {
      const now = performance.now();
      let squares = 0;
      for (const v of block) squares += v * v;
      S.samples += block.length; S.sumSquares += squares;
      S.blockSizes[block.length] = (S.blockSizes[block.length] || 0) + 1;
      S.channels[channels] = (S.channels[channels] || 0) + 1;
      S.blockRms.push(Math.sqrt(squares / block.length)); S.frames.push(frame); S.arrivals.push(now);
      if (ws.readyState === 1) { ws.send(block); S.wsSent += block.length; S.sentAt.push(performance.now()); }
    };
    window.stopCapture = () => { node.port.onmessage = null; ws.close(); return context.close(); };
    S.running = performance.now(); S.contextState = context.state;
    document.getElementById("status").textContent = `capturing at ${context.sampleRate} Hz`;
    console.log("capture running at", context.sampleRate);
  } catch (error) { S.error = `${error.name}: ${error.message}`; console.error(S.error); }
};
window.report = () => fetch("/report", {method: "POST", body: JSON.stringify({sampleRate: S.sampleRate,
  samples: S.samples, rms: Math.sqrt(S.sumSquares / S.samples)})}).then(r => { S.reported = r.status; });
</script>
"""

WORKLET = """class Capture extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0][0];
    if (channel) {
      const block = channel.slice();
      this.port.postMessage({frame: currentFrame, channels: inputs[0].length, block}, [block.buffer]);
    }
    return true;
  }
}
registerProcessor("capture", Capture);
"""


def _serve(work, address, port):
    """The self-test's server (run inside the Namespace): GET / and /worklet.js, POST /report
    (saved as WORK/report.json), and a WebSocket at /ws: connection N appends its binary messages to
    WORK/ws-N.f32 and logs `EPOCH_SECONDS BYTES` for each in WORK/ws-N.log."""
    import http.server
    connections = itertools.count(1)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/ws":
                return self.websocket()
            body, kind = {"/": (PAGE, "text/html"), "/worklet.js": (WORKLET, "text/javascript")}.get(
                self.path.split("?")[0], ("not found", None))
            self.send_response(200 if kind else 404)
            self.send_header("Content-Type", f"{kind or 'text/plain'}; charset=utf-8")
            self.send_header("Content-Length", str(len(body.encode())))
            self.end_headers()
            self.wfile.write(body.encode())

        def do_POST(self):
            data = self.rfile.read(int(self.headers["Content-Length"]))
            with open(os.path.join(work, "report.json"), "wb") as file:
                file.write(data)
            self.send_response(204)
            self.end_headers()

        def websocket(self):
            # RFC 6455, server side: accept, then read the client's (masked) frames until close.
            accept = base64.b64encode(hashlib.sha1(
                (self.headers["Sec-WebSocket-Key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", accept.decode())
            self.end_headers()
            self.close_connection = True
            with lock:
                number = next(connections)
            read = self.rfile.read
            with open(os.path.join(work, f"ws-{number}.f32"), "wb") as pcm, \
                    open(os.path.join(work, f"ws-{number}.log"), "w", buffering=1) as log:
                while True:
                    head = read(2)
                    if len(head) < 2 or head[0] & 15 == 8:
                        return
                    size = head[1] & 127
                    if size >= 126:
                        size = int.from_bytes(read(2 if size == 126 else 8), "big")
                    mask = read(4) if head[1] & 128 else b"\0\0\0\0"
                    data = read(size)
                    key = int.from_bytes((mask * (size // 4 + 1))[:size], "big")
                    if head[0] & 15 == 2:
                        pcm.write((int.from_bytes(data, "big") ^ key).to_bytes(size, "big"))
                        pcm.flush()
                        log.write(f"{time.time():.6f} {size}\n")

    server = http.server.ThreadingHTTPServer((address, int(port)), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(work, "cert.pem"), os.path.join(work, "key.pem"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print("serving", flush=True)
    server.serve_forever()


PATTERN = ((0.5, True), (0.5, False), (0.5, True), (1.0, False))   # 2.5 s; the long gap marks the end
BURST_RMS = 0.5 / math.sqrt(2)


def _runs(levels, rate, threshold=0.05, shortest=0.03):
    """[(on, seconds, mean level)] of consecutive 128-frame blocks above / below `threshold`, and
    how many runs shorter than `shortest` s were merged into the run before them (glitches)."""
    runs, glitches = [], 0
    for level in levels:
        on = level > threshold
        if runs and runs[-1][0] == on:
            runs[-1][1] += 1
            runs[-1][2].append(level)
        elif runs and len(runs[-1][2]) * 128 / rate < shortest and len(runs) > 1:
            glitches += 1                       # a short run: fold it back into the one before
            short = runs.pop()
            runs[-1][1] += short[1] + 1
            if runs[-1][0] == on:
                runs[-1][2].append(level)
        else:
            runs.append([on, 1, [level]])
    return [(on, n * 128 / rate, sum(values) / len(values)) for on, n, values in runs], glitches


def _frequency(samples, rate):
    """The frequency of the loudest 0.2 s of `samples` (rising zero crossings)."""
    window = int(0.2 * rate)
    best = max(range(0, max(1, len(samples) - window), window // 4),
               key=lambda start: sum(abs(v) for v in samples[start:start + window:16]))
    part = samples[best:best + window]
    crossings = sum(1 for a, b in zip(part, part[1:]) if a < 0 <= b)
    return crossings / (len(part) / rate), max(part)


def _percentiles(values, *fractions):
    ordered = sorted(values)
    return [ordered[min(len(ordered) - 1, int(f * len(ordered)))] for f in fractions] if ordered else []


def selftest():
    """Proves the fixture (see the module doc); prints checks, findings and "browser: N passed, N failed"."""
    began = time.monotonic()
    if os.environ.get("BROWSER_FIXTURE_IN_NAMESPACE") != "1":
        ensure_browser()
        print(f"ensure_browser: {time.monotonic() - began:.2f} s", flush=True)
        os.environ["BROWSER_FIXTURE_IN_NAMESPACE"] = "1"
        os.environ["BROWSER_FIXTURE_BEGAN"] = str(began)   # time.monotonic: CLOCK_MONOTONIC, one for all
        os.execvp("unshare", ["unshare", "--net", "--mount", sys.executable, os.path.abspath(__file__),
                              "--selftest"])
    began = float(os.environ.get("BROWSER_FIXTURE_BEGAN", began))
    counts = {True: 0, False: 0}

    def check(name, ok, detail=""):
        counts[bool(ok)] += 1
        print(f"{'✔' if ok else '✘'} browser: {name}" + (f" ({detail})" if detail else ""), flush=True)

    def info(text):
        print(f"  · {text}", flush=True)

    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    work = tempfile.mkdtemp(prefix="lightorgan-browser-selftest-")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=test", "-keyout", os.path.join(work, "key.pem"),
                    "-out", os.path.join(work, "cert.pem")], check=True, capture_output=True)
    write_tone_wav(os.path.join(work, "tone48.wav"), 48000, PATTERN)
    write_tone_wav(os.path.join(work, "tone44.wav"), 44100, PATTERN)
    namespace = Namespace()
    server = namespace.popen([sys.executable, os.path.abspath(__file__), "--serve", work, namespace.address,
                              "8443"], stdout=subprocess.PIPE, stderr=open(os.path.join(work, "server.err"), "w"))
    if server.stdout.readline().strip() != b"serving":
        raise RuntimeError(f"the test server did not start: see {work}/server.err")
    origin = f"https://{namespace.address}:8443"
    pattern_seconds = sum(seconds for seconds, _ in PATTERN)

    def capture(browser, url, seconds):
        """Opens the page, clicks Start, captures `seconds` of audio, stops; the page's state."""
        browser.open(url)
        browser.click("#start")
        browser.wait_for("selftest.running || selftest.error", 15)
        browser.wait_for(f"selftest.error || selftest.samples >= {seconds} * selftest.sampleRate", seconds + 10)
        state = browser.js("const s = {...selftest}; delete s.track; s.trackState = selftest.track?.readyState;"
                           " return s;")
        browser.js("return stopCapture();")
        browser.wait_for("selftest.wsClosed", 5)
        state["wsSent"], state["sentAt"] = browser.js("return [selftest.wsSent, selftest.sentAt];")
        with open(os.path.join(browser.log_dir, "page-state.json"), "w") as file:
            json.dump(state, file)
        return state

    def server_pcm(number):
        pcm = array.array("f")
        with open(os.path.join(work, f"ws-{number}.f32"), "rb") as file:
            pcm.frombytes(file.read())
        with open(os.path.join(work, f"ws-{number}.log")) as file:
            times = [float(line.split()[0]) for line in file]
        return pcm, times

    def analyse(state, label):
        rate, levels = state["sampleRate"], state["blockRms"]
        runs, glitches = _runs(levels, rate)
        info(f"{label}: runs (on/off s @ RMS) " + ", ".join(
            f"{'on' if on else 'off'} {seconds:.3f}" + (f" @ {level:.3f}" if on else "") for on, seconds, level in runs)
            + f"; {glitches} glitch(es) under 30 ms")
        arrivals, frames = state["arrivals"], state["frames"]
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        batches, size = [], 1
        for gap in gaps:
            if gap < 1.0:
                size += 1
            else:
                batches.append(size)
                size = 1
        between = [gap for gap in gaps if gap >= 1.0]
        late = [a - f / rate * 1000 for a, f in zip(arrivals, frames)]
        late = [value - min(late) for value in late]
        info(f"{label}: worklet → main thread: batches of {sorted({b: batches.count(b) for b in set(batches)}.items())} "
             f"blocks (size: count), {statistic(between, 0.5)} ms apart (p99 {statistic(between, 0.99)}, max "
             f"{max(between):.1f}); lateness vs the audio clock p50 {statistic(late, 0.5)} ms, p99 "
             f"{statistic(late, 0.99)}, max {max(late):.1f}; click → stream {state['gotStream'] - state['clicked']:.0f} "
             f"ms, → first block {arrivals[0] - state['clicked']:.0f} ms")
        return runs

    def statistic(values, fraction):
        return f"{_percentiles(values, fraction)[0]:.1f}"

    def interior_ok(runs, tolerance=0.04):
        """Every whole run is one of PATTERN's, at the burst level: not the last, not the first, nor the
        first burst when the capture began with silence (the file began playing before the worklet)."""
        expected_on = [s for s, on in PATTERN if on]
        expected_off = [s for s, on in PATTERN if not on]
        return all(any(abs(seconds - e) <= tolerance for e in (expected_on if on else expected_off))
                   and (not on or abs(level / BURST_RMS - 1) < 0.05) and (on or level < 0.001)
                   for on, seconds, level in runs[1 if runs[0][0] else 2:-1])

    # -- run 1: the 48 kHz WAV, looped (the default), new AudioContext() --------------------------
    started = time.monotonic()
    with Browser(fake_audio=os.path.join(work, "tone48.wav"), log_dir=os.path.join(work, "browser1")) as browser:
        info(f"Browser() ready in {time.monotonic() - started:.2f} s (in a private network namespace, lo up)")
        state = capture(browser, origin + "/", 6)
        check(f"HTTPS page from {namespace.address} over the veth (self-signed) is a secure context",
              state["secure"] and not state["error"], state["error"] or origin)
        rate = state["sampleRate"]
        frames = state["frames"]
        settled = next(i for i in range(len(frames)) if frames[i] - frames[0] >= 0.1 * rate)
        jumps = [(frames[i] - frames[0], b - a) for i, (a, b) in enumerate(zip(frames, frames[1:])) if b - a != 128]
        check("getUserMedia (fake device, WAV) + AudioWorklet deliver 128-frame blocks, contiguous after 0.1 s",
              state["blockSizes"] == {"128": len(frames)} and all(at < 0.1 * rate for at, _ in jumps)
              and state["samples"] >= 6 * rate and settled < len(frames),
              f"{len(frames)} blocks, {state['samples']} samples at {rate} Hz, input channels {state['channels']}; "
              f"currentFrame jumps (frames after the first block, jump): {jumps}")
        info(f"AudioContext().sampleRate {rate}, baseLatency {state['baseLatency']}; track '{state['label']}' "
             f"settings {state['settings']}")
        check("AudioContext sample rate is 44100 or 48000", rate in (44100, 48000), f"{rate} Hz")
        runs = analyse(state, "looped 48 kHz WAV")
        long_gaps = [seconds for on, seconds, _ in runs[1:-1] if not on and seconds > 0.75]
        check("bursts: 0.5 s of 440 Hz at RMS 0.354, silence between, as in the WAV", interior_ok(runs),
              f"{len(runs)} runs")
        heard = sum(seconds for on, seconds, _ in runs[:max(i for i, run in enumerate(runs) if run[0]) + 1])
        check("the WAV loops by default (its 1 s end gap recurs, bursts follow it)",
              len(long_gaps) >= 2 and heard > pattern_seconds + 1,
              f"{len(long_gaps)} end gaps, sound until {heard:.2f} s into the capture; the WAV lasts {pattern_seconds} s")
        time.sleep(0.3)
        pcm, times = server_pcm(1)
        frequency, peak = _frequency(pcm, rate)
        check("wss:// carries every block sent to the server", len(pcm) == state["wsSent"],
              f"{len(pcm)} samples at the server, {state['wsSent']} sent")
        check("the server's samples are the 440 Hz tone at amplitude 0.5", abs(frequency - 440) < 10 and abs(peak - 0.5) < 0.02,
              f"{frequency:.0f} Hz, peak {peak:.3f}")
        delays = [t * 1000 - (state["timeOrigin"] + sent) for t, sent in zip(times, state["sentAt"])]
        info(f"worklet block sent on the page → at the server: p50 {statistic(delays, 0.5)} ms, p99 "
             f"{statistic(delays, 0.99)} ms (wall clocks of one machine)")
        browser.js("return report();")
        browser.wait_for("selftest.reported", 5)
        with open(os.path.join(work, "report.json")) as file:
            report = json.load(file)
        check("fetch POST reaches the server", report["sampleRate"] == rate and report["samples"] > 0,
              json.dumps(report))
        check("getDisplayMedia is a function in headless mode", state["displayMedia"] == "function",
              state["displayMedia"])
        browser.click("#display")
        display = browser.wait_for("selftest.display", 5)
        check("getDisplayMedia with the fake UI returns a stream", display.startswith("stream"), display)
        messages = [entry["message"] for entry in browser.console_log()]
        check("console_log() has the page's console.log lines",
              any("selftest page loaded" in m for m in messages) and any("capture running at" in m for m in messages),
              f"{len(messages)} entries")
        browser.phone_viewport()
        viewport = browser.js("return [innerWidth, innerHeight, devicePixelRatio]")
        size = browser.screenshot(os.path.join(work, "phone.png"))
        check("phone_viewport() + screenshot() give a 1170×2532 PNG (CSS 390×844 at 3×)",
              size == (1170, 2532) and viewport == [390, 844, 3], f"{size[0]}×{size[1]}, CSS {viewport}")

    # -- run 2: the 44.1 kHz WAV once (%noloop), AudioContext({sampleRate: 48000}), phone first ----
    with Browser(fake_audio=os.path.join(work, "tone44.wav"), loop=False,
                 log_dir=os.path.join(work, "browser2")) as browser:
        browser.open("about:blank")
        browser.phone_viewport()
        state = capture(browser, origin + "/?rate=48000", 4.5)
        rate = state["sampleRate"]
        check("click() works in the phone viewport with touch; AudioContext({sampleRate: 48000}) runs at 48000",
              rate == 48000 and not state["error"], f"{rate} Hz, {state['error']}")
        runs = analyse(state, "44.1 kHz WAV, %noloop, 48 kHz context")
        heard = sum(seconds for on, seconds, _ in runs[:-1]) if runs and not runs[-1][0] else 0
        check("%noloop: the WAV plays once, then silence (the track stays live)",
              not runs[-1][0] and runs[-1][1] > 1.5 and heard < pattern_seconds and interior_ok(runs),
              f"sound ends {heard:.2f} s into the capture, then {runs[-1][1]:.2f} s silence; track "
              f"{state['trackState']}, ended event {state['trackEnded']}")
        time.sleep(0.3)
        pcm, _ = server_pcm(2)
        frequency, peak = _frequency(pcm, rate)
        check("44.1 kHz file → 48 kHz context: still 440 Hz at amplitude 0.5",
              abs(frequency - 440) < 10 and abs(peak - 0.5) < 0.02, f"{frequency:.0f} Hz, peak {peak:.3f}")

    server.kill()
    server.wait()
    namespace.stop()
    info(f"work folder {work}; total {time.monotonic() - began:.1f} s (ensure_browser included)")
    print(f"browser: {counts[True]} passed, {counts[False]} failed")
    sys.exit(0 if counts[False] == 0 else 1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        _serve(*sys.argv[2:5])
    elif sys.argv[1:2] == ["--selftest"]:
        selftest()
    else:
        sys.exit(__doc__)

"""The page's other two engines, beside Chromium (support.browser.Browser): WebKitGTK, as iPhone Safari is
WebKit, and Firefox ESR. `WebKit(log_dir)` and `Firefox(log_dir, pulse_server)` have the calls the
three-engine test uses, as Browser has them: `.open(url)`, `.js(body, *args)`, `.wait_for(expression,
timeout)`, `.click(css)`, `.screenshot(path)`, `.close()`.

- `WebKit`: Debian's `webkit2gtk-driver` (WebKitWebDriver) driving its MiniBrowser through selenium's
  WebKitGTK driver, under an Xvfb of its own. The microphone is WebKit's mock capture device
  (`--enable-mock-capture-devices`: a steady sound about -22 dBFS); TLS errors ignored (the receiver's
  own certificate).
- `Firefox`: `firefox-esr --headless` with its own WebDriver BiDi server (`--remote-debugging-port`; Debian
  has no geckodriver), spoken to by `BiDi`, a small client over a WebSocket of its own. The microphone is
  Firefox's fake stream (`media.navigator.streams.fake`: a tone); its AudioContext needs a sound output
  device, so it plays into a private PulseAudio server's null sink (`pulse_server`).

Measured here (2 cores, no sound card)
  - WebKitWebDriver matches capabilities by starting the browser: MiniBrowser needs `--automation` among
    the `webkitgtk:browserOptions` args, or the session fails with "Failed to match capabilities".
  - WebKit's web process runs in a bubblewrap sandbox that cannot reach an Xvfb of the test's network
    namespace ("cannot open display"); WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS=1 leaves it out (a test
    browser on the test's own page).
  - The page in MiniBrowser: 40 lamp updates a second, the mock microphone sent at 44100 Hz.
"""
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.common.by import By

from support.browser import png_size, send_frame
from support.processes import stop_popen

MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
FIREFOX = "/usr/bin/firefox-esr"
PHONE = (390, 844)


def _wait_for(engine, predicate, timeout):
    deadline = time.monotonic() + timeout
    while True:
        value = engine.js(f"return ({predicate});")
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{predicate!r} not true after {timeout} s in {engine.name}")
        time.sleep(0.05)


class Xvfb:
    """A virtual X server on a display no other holds (its lock file absent), ready when its socket is
    there; `.display`, `.close()`."""

    def __init__(self, log_path):
        number = next(n for n in range(90, 190) if not os.path.exists(f"/tmp/.X{n}-lock"))
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                            stdout=log, stderr=log)
        self.display = f":{number}"
        deadline = time.monotonic() + 10
        while not os.path.exists(f"/tmp/.X11-unix/X{number}"):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError(f"Xvfb did not start on {self.display}; see {log_path}")
            time.sleep(0.05)

    def close(self):
        stop_popen(self.process)


class WebKit:
    """MiniBrowser (WebKitGTK) through WebKitWebDriver and selenium, in a phone-sized window."""
    name = "webkit"

    def __init__(self, log_dir):
        os.makedirs(log_dir, exist_ok=True)
        self.xvfb = Xvfb(os.path.join(log_dir, "xvfb.log"))
        options = webdriver.WebKitGTKOptions()
        options.binary_location = MINIBROWSER
        for argument in ("--automation", "--enable-mock-capture-devices=true", "--enable-media-stream=true",
                         "--ignore-tls-errors"):
            options.add_argument(argument)
        service = webdriver.WebKitGTKService(
            executable_path=WEBKIT_DRIVER, log_output=os.path.join(log_dir, "webkitwebdriver.log"),
            env=dict(os.environ, DISPLAY=self.xvfb.display, WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS="1"))
        try:
            self.driver = webdriver.WebKitGTK(options=options, service=service)
            self.driver.set_window_size(*PHONE)
        except Exception as error:
            service.stop()
            self.xvfb.close()
            raise RuntimeError(f"MiniBrowser did not start ({error}); see {log_dir}") from error

    def open(self, url):
        self.driver.get(url)

    def js(self, body, *args):
        return self.driver.execute_script(body, *args)

    def wait_for(self, predicate, timeout=10.0):
        return _wait_for(self, predicate, timeout)

    def click(self, css):
        self.driver.find_element(By.CSS_SELECTOR, css).click()

    def screenshot(self, path):
        if not self.driver.save_screenshot(path):
            raise RuntimeError(f"screenshot to {path} failed")
        return png_size(path)

    def close(self):
        driver, self.driver = getattr(self, "driver", None), None
        try:
            if driver is not None:
                driver.quit()
        finally:
            self.xvfb.close()


class BiDi:
    """A WebDriver BiDi client over one WebSocket (RFC 6455, masked text frames out, whole messages in):
    `.command(method, **params)` → its result; events are skipped."""

    def __init__(self, port, timeout=30):
        self.connection = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.connection.sendall((f"GET /session HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                                 f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                                 "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.connection.recv(4096)
            if not chunk:
                raise ConnectionError(f"Firefox's BiDi server closed the upgrade: {head!r}")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"Firefox's BiDi server refused the upgrade: {head[:200]!r}")
        self.next_id = 0

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.connection.recv(1 << 20)
            if not chunk:
                raise ConnectionError("Firefox's BiDi server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def _message(self):
        parts = []
        while True:
            first, second = self._read(2)
            length = second & 0x7f
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0f
            if opcode == 8:
                raise ConnectionError(f"Firefox's BiDi server closed the session: {payload[2:]!r}")
            if opcode in (0, 1, 2):
                parts.append(payload)
            if first & 0x80 and opcode != 9 and opcode != 10:
                return json.loads(b"".join(parts))

    def command(self, method, **params):
        self.next_id += 1
        send_frame(self.connection, 1, json.dumps({"id": self.next_id, "method": method, "params": params}).encode())
        while True:
            message = self._message()
            if message.get("id") != self.next_id:
                continue  # an event
            if message.get("type") == "error":
                raise RuntimeError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def close(self):
        self.connection.close()


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Firefox:
    """Firefox ESR headless, driven over its own WebDriver BiDi server; its sound into `pulse_server`
    (a PulseAudio socket path), without which its AudioContext never starts."""
    name = "firefox"
    PREFERENCES = {
        "media.navigator.streams.fake": True,
        "media.navigator.permission.disabled": True,
        "media.autoplay.default": 0,
        "browser.shell.checkDefaultBrowser": False,
        "datareporting.policy.dataSubmissionEnabled": False,
        "toolkit.telemetry.reportingpolicy.firstRun": False,
        "app.update.disabledForTesting": True,
    }

    def __init__(self, log_dir, pulse_server=None):
        os.makedirs(log_dir, exist_ok=True)
        self.profile = tempfile.mkdtemp(prefix="lightorgan-firefox-")
        with open(os.path.join(self.profile, "user.js"), "w") as preferences:
            for name, value in self.PREFERENCES.items():
                preferences.write(f"user_pref({json.dumps(name)}, {json.dumps(value)});\n")
        port = _free_port()
        environment = dict(os.environ, MOZ_HEADLESS="1", HOME=self.profile)
        if pulse_server:
            environment["PULSE_SERVER"] = f"unix:{pulse_server}"
        self.log = open(os.path.join(log_dir, "firefox.log"), "w")
        self.process = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--profile", self.profile, "--remote-debugging-port", str(port),
             f"--window-size={PHONE[0]},{PHONE[1]}", "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT, env=environment)
        self.bidi = None
        deadline = time.monotonic() + 60
        while self.bidi is None:
            try:
                self.bidi = BiDi(port)
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.close()
                    raise RuntimeError(f"Firefox's BiDi server did not answer on port {port}; see {log_dir}")
                time.sleep(0.2)
        self.bidi.command("session.new", capabilities={"alwaysMatch": {"acceptInsecureCerts": True}})
        self.context = self.bidi.command("browsingContext.getTree")["contexts"][0]["context"]
        self.bidi.command("browsingContext.setViewport", context=self.context,
                          viewport={"width": PHONE[0], "height": PHONE[1]}, devicePixelRatio=3)

    def open(self, url):
        self.bidi.command("browsingContext.navigate", context=self.context, url=url, wait="complete")

    def js(self, body, *args):
        """Runs `body` as a function body with `arguments`; its return value as JSON gives it back."""
        function = f"(...args) => JSON.stringify((function () {{ {body} }}).apply(null, args)) ?? 'null'"
        result = self.bidi.command("script.callFunction", functionDeclaration=function, awaitPromise=False,
                                   target={"context": self.context},
                                   arguments=[{"type": "string", "value": a} if isinstance(a, str) else
                                              {"type": "number", "value": a} for a in args])
        if result.get("type") == "exception":
            raise RuntimeError(f"script failed: {result['exceptionDetails'].get('text')}")
        return json.loads(result["result"]["value"])

    def wait_for(self, predicate, timeout=10.0):
        return _wait_for(self, predicate, timeout)

    def click(self, css):
        """A trusted click (a user gesture: the AudioContext may start) in the middle of the element."""
        x, y = self.js("const e = document.querySelector(arguments[0]); e.scrollIntoView({block: 'center'}); "
                       "const r = e.getBoundingClientRect(); return [Math.round(r.x + r.width / 2), "
                       "Math.round(r.y + r.height / 2)]", css)
        self.bidi.command("input.performActions", context=self.context, actions=[{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
                {"type": "pointerMove", "x": x, "y": y}, {"type": "pointerDown", "button": 0},
                {"type": "pointerUp", "button": 0}]}])

    def screenshot(self, path):
        data = self.bidi.command("browsingContext.captureScreenshot", context=self.context)["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        return png_size(path)

    def close(self):
        try:
            if self.bidi is not None:
                try:
                    self.bidi.command("browser.close")
                except (OSError, RuntimeError, ConnectionError):
                    pass
                self.bidi.close()
        finally:
            stop_popen(self.process, timeout=10)
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)

"""A real Home Assistant for the receiver's MQTT discovery: PyPI's `homeassistant` 2024.3.3 (the last release for
Python 3.11, these machines' Python) in a venv cached under ~/.cache/lightorgan (made once, beside the builds:
`venv()`), started with a configuration of its own on a loopback port; its onboarding and its MQTT entry made
through its REST API; services called and states read through the same API.

The venv: `homeassistant` alone first (its wheel holds the constraints file the rest is pinned by), then the packages
Home Assistant would otherwise pip-install at its first start (it runs with --skip-pip), and josepy below 2 (with
josepy 2 every HTTP request answers 500). Without the frontend it starts in recovery mode, with no API."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from support import caches
from support.processes import Process, free_port, wait_for

VERSION = "2024.3.3"
REQUIREMENTS = [f"homeassistant=={VERSION}", "paho-mqtt==1.6.1", "SQLAlchemy==2.0.27", "fnv-hash-fast==0.5.0",
                "psutil-home-assistant==0.0.1", "Pillow==10.2.0", "janus==1.0.0",
                "home-assistant-frontend==20240307.0", "securetar==2024.2.1", "pyotp==2.8.0", "PyQRCode==1.2.1",
                "PyTurboJPEG==1.7.1"]
CONSTRAINTS = ["josepy<2"]
CLIENT = "http://127.0.0.1/"


def venv():
    """The venv's folder (made once: about a minute and 630 MB). A venv is not relocatable: it is made where it
    stays, keyed by what it holds."""
    key = hashlib.sha256("\n".join(REQUIREMENTS + CONSTRAINTS).encode()).hexdigest()[:12]
    path = caches.folder(f"venv-homeassistant-{key}")
    with caches.locked("venv-homeassistant"):
        if not os.path.exists(os.path.join(path, "bin", "hass")):
            shutil.rmtree(path, ignore_errors=True)
            subprocess.run(["/usr/bin/python3", "-m", "venv", path], check=True)
            pip = [os.path.join(path, "bin", "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            # Without its dependencies: unpinned, pip's resolver walks back through dozens of releases of some of
            # them, building each one's sdist to read its metadata (minutes of CPU); pinned by the constraints, the
            # second install takes each one's wheel.
            subprocess.run([*pip, "--no-deps", REQUIREMENTS[0]], check=True)
            version = f"python{sys.version_info.major}.{sys.version_info.minor}"
            bundled = os.path.join(path, "lib", version, "site-packages", "homeassistant", "package_constraints.txt")
            extra = os.path.join(path, "extra-constraints.txt")
            with open(extra, "w") as file:
                file.write("\n".join(CONSTRAINTS) + "\n")
            subprocess.run([*pip, *REQUIREMENTS, "-c", bundled, "-c", extra], check=True)
            with open(os.path.join(path, "made"), "w") as note:  # the venv is whole
                note.write(VERSION + "\n")
    return path


class HomeAssistant:
    """Home Assistant in `folder` (its configuration and log), its HTTP API on 127.0.0.1, linked to the MQTT broker at
    `broker_host`:`broker_port` once `start()` returns."""

    def __init__(self, folder, broker_host, broker_port):
        self.folder, self.port = folder, free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.token = None
        config = os.path.join(folder, "config")
        os.makedirs(config, exist_ok=True)
        with open(os.path.join(config, "configuration.yaml"), "w") as file:
            file.write("homeassistant:\n  name: Test home\n  latitude: 52.52\n  longitude: 13.40\n  elevation: 34\n"
                       "  unit_system: metric\n  time_zone: UTC\n  currency: EUR\n  country: DE\n"
                       f"http:\n  server_host: 127.0.0.1\n  server_port: {self.port}\n"
                       "api:\nconfig:\nonboarding:\n")
        started = time.monotonic()
        self.process = Process(folder, "hass", [os.path.join(venv(), "bin", "hass"), "-c", config, "--skip-pip"])
        if not wait_for(lambda: self._answers("/api/onboarding"), 120):
            raise RuntimeError(f"Home Assistant's API did not answer: {self.process.log()[-1500:]}")
        self._onboard()
        self._link(broker_host, broker_port)
        self.seconds = time.monotonic() - started

    def _answers(self, path):
        try:
            with urllib.request.urlopen(self.base + path, timeout=2):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False

    def request(self, method, path, body=None, form=False):
        """The API's answer to `method path` (JSON), with the owner's token once there is one."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        data = None
        if body is not None:
            if form:
                data = urllib.parse.urlencode(body).encode()
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            else:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
        answer = urllib.request.urlopen(urllib.request.Request(self.base + path, data=data, headers=headers,
                                                               method=method), timeout=10)
        with answer:
            text = answer.read()
        return json.loads(text) if text else None

    def _onboard(self):
        user = self.request("POST", "/api/onboarding/users",
                            {"client_id": CLIENT, "name": "Owner", "username": "owner", "password": "owner-password",
                             "language": "en"})
        tokens = self.request("POST", "/auth/token", {"grant_type": "authorization_code", "code": user["auth_code"],
                                                      "client_id": CLIENT}, form=True)
        self.token = tokens["access_token"]
        self.request("POST", "/api/onboarding/analytics", {})
        self.request("POST", "/api/onboarding/integration", {"client_id": CLIENT, "redirect_uri": CLIENT})

    def _link(self, host, port):
        flow = self.request("POST", "/api/config/config_entries/flow", {"handler": "mqtt",
                                                                         "show_advanced_options": False})
        result = self.request("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                              {"broker": host, "port": port})
        if result.get("type") != "create_entry":
            raise RuntimeError(f"Home Assistant's MQTT entry was not made: {result}")

    def states(self):
        """{entity_id: state dict} of every entity now."""
        return {state["entity_id"]: state for state in self.request("GET", "/api/states")}

    def state(self, entity_id):
        """The entity's state dict, None when Home Assistant does not know it."""
        try:
            return self.request("GET", f"/api/states/{entity_id}")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def call(self, domain, service, data):
        self.request("POST", f"/api/services/{domain}/{service}", data)

    def stop(self):
        self.process.stop(timeout=10)

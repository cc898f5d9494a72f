"""The receiver's service in the package's sandbox: the packaged unit scores at most 2.0 with systemd-analyze, and
under a real systemd the receiver works in that sandbox, which refuses what the receiver no longer needs.

- systemd-analyze security --offline=yes on the packaged unit: exposure at most 2.0.
- The sandbox for real (support/booted_root.py): systemd-nspawn boots a bookworm amd64 root with systemd where the
  amd64 package is installed with dpkg; its own private network: lo and a veth pair (10.77.9.2/24). There the
  packaged unit runs `lightorgan receive` (a drop-in changes only its ExecStart, to add `--output stdout`), which
  must make its certificate with openssl, serve its page, publish itself through avahi-daemon's D-Bus socket and
  show frames. A static probe (guests/sandbox-probe.c) run with the unit's [Service] properties (systemd-run -p …)
  must be refused what the receiver no longer needs, and allowed it as the same user without them (the control).
What cannot run here: the devices (no GPIO chip, spidev or WS2812 device on this machine; the emulated Pis
boot busybox, not systemd), so DeviceAllow= is checked for its words, not its effect on those devices.
"""
import array
import math
import os
import re
import subprocess
import sys

import pytest

from support import debian_roots
from support.apt_release import run, tail
from support.booted_root import ADDRESS, BootedRoot
from support.processes import wait_for
from support.sound_signals import signals  # noqa: F401 (a fixture: the tones the AirPlay client streams)

pytestmark = [pytest.mark.release, pytest.mark.package]

# pyatv's AirPlay client, from the tests' venv (requirements.txt).
ATVREMOTE = os.path.join(os.path.dirname(sys.executable), "atvremote")

GUESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guests")
UNIT = "usr/lib/systemd/system/lightorgan-receiver.service"
# What systemd-run takes from the unit to run the probe in the same sandbox: every [Service] setting but
# how the service starts, stops and restarts.
NOT_SANDBOX = {"Type", "ExecStart", "Restart", "RestartSec", "TimeoutStopSec"}


def _slow_tests_selected(request):
    return any(getattr(getattr(item, "module", None), "__name__", None) == __name__
               and item.get_closest_marker("slow") for item in request.session.items)


def fetch_up_front(request):
    """The root systemd boots in (made once: about 2 minutes)."""
    if _slow_tests_selected(request):
        debian_roots.systemd_root()


def test_the_packaged_unit_scores_at_most_2_0(unpacked, check, figure):
    result = run(["systemd-analyze", "security", "--offline=yes", os.path.join(unpacked, UNIT)])
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", result.stdout)
    score = float(match[1]) if match else None
    check("systemd-analyze security --offline=yes on the packaged unit gives an exposure", score is not None,
          tail(result.stdout + result.stderr, 5))
    check("systemd-analyze security --offline=yes on the packaged unit: exposure at most 2.0",
          score is not None and score <= 2.0, score if score else tail(result.stdout + result.stderr, 5))
    figure(f"systemd-analyze security --offline=yes: exposure {score}")


# -- the unit in a booted systemd ----------------------------------------------------------------

def _unit_properties(path):
    """The unit's [Service] settings (name, value) but NOT_SANDBOX, in order: a setting may repeat."""
    properties, section = [], None
    with open(path) as unit:
        for line in unit:
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[Service]" and line and not line.startswith("#") and "=" in line:
                name, value = line.split("=", 1)
                if name not in NOT_SANDBOX:
                    properties.append((name, value))
    return properties


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """guests/sandbox-probe.c, built static here."""
    binary = str(tmp_path_factory.mktemp("probe") / "sandbox-probe")
    subprocess.run(["cc", "-static", "-O2", "-Wall", "-o", binary, os.path.join(GUESTS, "sandbox-probe.c")],
                   check=True)
    return binary


@pytest.fixture(scope="module")
def booted(tmp_path_factory, amd64_package, probe):
    root = BootedRoot(str(tmp_path_factory.mktemp("booted")), amd64_package, probe)
    yield root
    root.stop()


def _journal(booted, unit="lightorgan-receiver.service"):
    return booted.run(["journalctl", "-u", unit, "-o", "cat", "--no-pager"]).stdout


@pytest.mark.slow
def test_the_receiver_works_in_the_packaged_units_sandbox(booted, check, figure):
    check("dpkg -i installs the amd64 package in the root (postinst without a running systemd)",
          booted.installed.returncode == 0, tail(booted.installed.stdout, 8))
    if not check("systemd-nspawn boots the root: its systemd says running", booted.state == "running",
                 f"state {booted.state!r}; {tail(open(booted.log.name).read(), 8)}"):
        return
    service = "lightorgan-receiver.service"
    check("postinst enabled the service (deb-systemd-helper)",
          booted.run(["systemctl", "is-enabled", service]).stdout.strip() == "enabled",
          tail(booted.run(["systemctl", "status", "--no-pager", service]).stdout, 8))
    check("systemd started it at boot", booted.run(["systemctl", "is-active", service]).stdout.strip() == "active",
          tail(booted.run(["systemctl", "status", "--no-pager", service]).stdout, 8))
    online = booted.run(["systemd-analyze", "security", service]).stdout
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+)", online)
    figure(f"systemd-analyze security of the running unit (inside the booted root): {match[1] if match else '?'}")

    started = wait_for(lambda: all(booted.run(["test", "-s", f"/var/lib/lightorgan/{name}"]).returncode == 0
                                   for name in ("page-secret", "page-certificate.pem", "page-key.pem")), 60)
    state = booted.run(["stat", "-c", "%a %U %n", "/var/lib/lightorgan/page-key.pem",
                        "/var/lib/lightorgan/page-certificate.pem"]).stdout
    check("the receiver made its page's certificate in /var/lib/lightorgan (openssl, a child process: exec allowed)",
          started, tail(_journal(booted), 8))
    check("its state is the service user's alone (mode 600)", all(
        line.split()[0] == "600" and line.split()[1] == "lightorgan" for line in state.splitlines()), state)
    main = booted.run(["systemctl", "show", "-p", "MainPID", "--value", service]).stdout.strip()
    status = booted.run(["cat", f"/proc/{main}/status"]).stdout
    fields = dict(re.findall(r"(?m)^(\w+):\s+(.*)$", status))
    check("the running receiver: seccomp filter on (Seccomp: 2)", fields.get("Seccomp") == "2",
          f"Seccomp {fields.get('Seccomp')}")
    check("the running receiver: NoNewPrivs 1", fields.get("NoNewPrivs") == "1",
          f"NoNewPrivs {fields.get('NoNewPrivs')}")
    check("the running receiver: no capability (CapBnd 0)", int(fields.get("CapBnd", "1"), 16) == 0,
          f"CapBnd {fields.get('CapBnd')}")

    page = booted.net([sys.executable, "-c", "import ssl, urllib.request; context = ssl._create_unverified_context(); "
                       f"answer = urllib.request.urlopen('https://{ADDRESS}:8443/', context=context, timeout=10); "
                       "print(answer.status, len(answer.read()))"])
    # As the service user, not root: a TCP option set at the socket level (SO_DEBUG, which needs CAP_NET_ADMIN,
    # where TCP_NODELAY was meant) once made the receiver close every page connection it accepted.
    check(f"its page answers over HTTPS at https://{ADDRESS}:8443/ (the receiver runs as the service user)",
          page.returncode == 0, f"exit {page.returncode}: {tail(page.stdout + page.stderr, 2)}")
    check("…with 200", page.stdout.startswith("200 "), tail(page.stdout + page.stderr, 2))
    check(f"its log names the page at its LAN address {ADDRESS} (getifaddrs, through netlink)",
          f"https://{ADDRESS}:8443/#key=" in _journal(booted), tail(_journal(booted), 6))
    # The receiver publishes once avahi-daemon has registered its name: browsed until it shows, up to 30 s.
    browsed = []

    def published():
        browsed.append(booted.run(["avahi-browse", "--resolve", "--terminate", "--parsable", "_lightorgan._tcp"],
                                  timeout=30))
        return re.search(rf"(?m)^=;lt0;IPv4;.*;_lightorgan\._tcp;.*;{re.escape(ADDRESS)};8181;", browsed[-1].stdout)
    found = wait_for(published, 30)
    check("avahi-browse finds it as _lightorgan._tcp (published through avahi-daemon's D-Bus socket)", found,
          tail(browsed[-1].stdout + browsed[-1].stderr, 4))

    sender = booted.run(["timeout", "-s", "TERM", "4", "lightorgan", "send", "--host", "127.0.0.1", "--input", "demo",
                         "--quiet"], timeout=30)
    raw = booted.net([sys.executable, "-c", "import socket, time; s = socket.create_connection(('127.0.0.1', 8181)); "
                      "time.sleep(0.5); s.sendall(bytes([200, 32, 255])); time.sleep(1); s.close()"])
    wait_for(lambda: any(line.endswith(" 200 32 255") for line in _journal(booted).splitlines()), 1)  # in the journal
    stopped = booted.run(["systemctl", "stop", service], timeout=30)
    result = booted.run(["systemctl", "show", "-p", "Result", "-p", "NRestarts", service]).stdout
    frames = [line for line in _journal(booted).splitlines() if re.fullmatch(r"[0-9.]+ [0-9]+ [0-9]+ [0-9]+", line)]
    check(f"it showed the installed sender's frames ({len(frames)}, at least 100)", len(frames) >= 100,
          f"sender {sender.returncode}")
    check("…and a raw 3-byte frame (200 32 255)", any(line.endswith(" 200 32 255") for line in frames),
          f"raw {raw.returncode}: {tail(raw.stderr, 2)}")
    check("systemctl stop exits 0", stopped.returncode == 0, f"exit {stopped.returncode}: {tail(stopped.stderr, 2)}")
    check("it never died on a refused system call and stopped cleanly on SIGTERM (Result=success)",
          "Result=success" in result, result)
    check("it never restarted (NRestarts=0)", "NRestarts=0" in result, result)


@pytest.mark.slow
def test_the_receivers_snapclient_joins_the_house_from_inside_the_sandbox(booted, check):
    """receiver.sound: snapcast in the packaged unit: its snapclient child runs inside the same sandbox (seccomp,
    no new privileges, the service user), joins a snapserver on the same machine and lights the lamps with its
    stream, and the receiver never dies on a refused system call. Debian's own snapserver and snapclient
    services (the packages' defaults) are stopped first; the house's server runs beside, outside the sandbox."""
    if not check("systemd-nspawn booted the root", booted.state == "running", booted.state):
        return
    service = "lightorgan-receiver.service"
    booted.run(["systemctl", "disable", "--now", "snapserver.service", "snapclient.service"])
    house = os.path.join(booted.root, "srv/house")
    os.makedirs(os.path.join(house, "data"), exist_ok=True)
    os.mkfifo(os.path.join(house, "snapfifo"))
    with open(os.path.join(house, "snapserver.conf"), "w") as conf:
        conf.write("[server]\ndatadir = /srv/house/data\n[http]\nenabled = false\n[tcp]\nbind_to_address = 127.0.0.1\n"
                   "[stream]\nbind_to_address = 127.0.0.1\nsource = pipe:///srv/house/snapfifo?name=house&mode=read\n"
                   "sampleformat = 44100:16:2\ncodec = pcm\nbuffer = 1000\n")
    tone = array.array("h", (int(12000 * math.sin(2 * math.pi * 1000 * n / 44100)) for n in range(44100 * 8)
                             for _ in range(2)))
    with open(os.path.join(house, "tone.raw"), "wb") as raw:
        tone.tofile(raw)
    started = booted.run(["systemd-run", "--unit", "house", "snapserver", "-c", "/srv/house/snapserver.conf"])
    check("the house's snapserver runs beside", started.returncode == 0, tail(started.stdout + started.stderr, 3))
    since = _restart_with_sound(booted, service, "snapcast://127.0.0.1:1704")
    joined = wait_for(lambda: any("connected to the Snapcast server at 127.0.0.1" in line for line in since()), 30)
    check("the receiver's snapclient joined the server from inside the sandbox", joined, "\n".join(since()[-12:]))
    _check_child_in_sandbox(booted, service, "snapclient", check)
    writer = booted.run(["systemd-run", "--unit", "house-writer", "sh", "-c",
                         "cat /srv/house/tone.raw > /srv/house/snapfifo"])

    def lit():
        return [line for line in since() if re.fullmatch(r"[0-9.]+ [0-9]+ [0-9]+ [0-9]+", line)
                and int(line.split()[2]) >= 128]
    check("the house's stream is written into its fifo", writer.returncode == 0,
          f"exit {writer.returncode}: {tail(writer.stdout + writer.stderr, 3)}")
    check("the lamps follow the house's stream (a 1 kHz tone: the mid lamp)",
          wait_for(lambda: len(lit()) >= 50, 20) if writer.returncode == 0 else False, "\n".join(since()[-12:]))
    check("the log says it played", wait_for(lambda: any("Snapcast: playing" in line for line in since()), 5))
    _check_nothing_refused(booted, service, "snapclient", since, check)
    booted.run(["systemctl", "stop", "house-writer.service", "house.service"])
    _restore(booted, service)


SOUND_DROP_IN = "test-sound.conf"


def _restart_with_sound(booted, service, sound):
    """The service restarted with receiver.sound `sound` (a drop-in: nothing played, named Kitchen, the level
    response); returns a function that gives the journal's lines since."""
    booted.write(f"etc/systemd/system/{service}.d/{SOUND_DROP_IN}",
                 f"[Service]\nEnvironment=LIGHTORGAN_RECEIVER_SOUND={sound} LIGHTORGAN_RECEIVER_PLAY=none "
                 "LIGHTORGAN_RECEIVER_NAME=Kitchen LIGHTORGAN_ANALYSIS_RESPONSE=level\n")
    before = len(_journal(booted).splitlines())
    booted.run(["systemctl", "daemon-reload"])
    booted.run(["systemctl", "restart", service], timeout=30)
    return lambda: _journal(booted).splitlines()[before:]


def _restore(booted, service):
    """The drop-in of `_restart_with_sound` removed, the service stopped."""
    os.remove(os.path.join(booted.root, f"etc/systemd/system/{service}.d/{SOUND_DROP_IN}"))
    booted.run(["systemctl", "daemon-reload"])
    booted.run(["systemctl", "stop", service], timeout=30)


def _check_nothing_refused(booted, service, program, since, check):
    """The receiver never died on a refused system call, and `program`, its child, said of none that it was
    refused."""
    result = booted.run(["systemctl", "show", "-p", "Result", "-p", "NRestarts", "-p", "ActiveState", service]).stdout
    check("the receiver is still active (ActiveState=active)", "ActiveState=active" in result,
          result + "\n".join(since()[-8:]))
    check("the receiver never died on a refused system call (Result=success)", "Result=success" in result,
          result + "\n".join(since()[-8:]))
    check("the receiver never restarted (NRestarts=0)", "NRestarts=0" in result, result + "\n".join(since()[-8:]))
    refused = [line for line in since() if program.split("-")[0] in line.lower()
               and ("Operation not permitted" in line or "Permission denied" in line)]
    check(f"{program} was refused nothing it said", not refused, "\n".join(refused[:5]))


def _check_child_in_sandbox(booted, service, name, check):
    """The service's child program `name` runs in the service's sandbox: seccomp filter on (Seccomp 2), NoNewPrivs 1,
    no capability (CapBnd 0), the service user."""
    main = booted.run(["systemctl", "show", "-p", "MainPID", "--value", service]).stdout.strip()
    children = booted.run(["sh", "-c", f"grep -l '^PPid:[[:space:]]*{main}$' /proc/[0-9]*/status"]).stdout.split()
    found = next((path for path in children
                  if booted.run(["sh", "-c", f"grep -q '^Name:[[:space:]]*{name}' {path}"]).returncode == 0), None)
    fields = dict(re.findall(r"(?m)^(\w+):\s+(.*)$", booted.run(["cat", found]).stdout)) if found else {}
    uid = booted.run(["id", "-u", "lightorgan"]).stdout.strip()
    check(f"{name} runs in the same sandbox: seccomp filter on (Seccomp 2)", fields.get("Seccomp") == "2",
          f"{fields.get('Name')}: Seccomp {fields.get('Seccomp')}")
    check(f"{name} runs in the same sandbox: NoNewPrivs 1", fields.get("NoNewPrivs") == "1",
          f"{fields.get('Name')}: NoNewPrivs {fields.get('NoNewPrivs')}")
    check(f"{name} runs in the same sandbox: no capability (CapBnd 0)", int(fields.get("CapBnd", "1"), 16) == 0,
          f"{fields.get('Name')}: CapBnd {fields.get('CapBnd')}")
    check(f"{name} runs as the service user", fields.get("Uid", "").split()[:1] == [uid],
          f"{fields.get('Name')}: Uid {fields.get('Uid')}, the service user's {uid}")


@pytest.mark.slow
def test_the_receivers_shairport_sync_plays_airplay_from_inside_the_sandbox(booted, signals, check):  # noqa: F811
    """receiver.sound: airplay in the packaged unit: its shairport-sync child runs inside the same sandbox (seccomp,
    no new privileges, the service user), is published through avahi-daemon under the receiver's name, takes a
    real AirPlay client's stream (pyatv, in the root's network) and lights the lamps with it; the receiver never
    dies on a refused system call. Debian's own shairport-sync service (on by default) is stopped first."""
    if not check("systemd-nspawn booted the root", booted.state == "running", booted.state):
        return
    service = "lightorgan-receiver.service"
    booted.run(["systemctl", "disable", "--now", "shairport-sync.service"])
    since = _restart_with_sound(booted, service, "airplay")
    browsed = []

    def published():
        browsed.append(booted.run(["avahi-browse", "--resolve", "--terminate", "--parsable", "_raop._tcp"], timeout=30))
        # shairport-sync's name is MAC@name; avahi-browse --parsable writes the @ as \064.
        return re.search(r"(?m)^=;[^;]*;IPv4;[^;]*(@|\\064)Kitchen;", browsed[-1].stdout)
    check("avahi-daemon publishes the AirPlay speaker under the receiver's name (shairport-sync, from the sandbox)",
          wait_for(published, 30), tail(browsed[-1].stdout if browsed else "", 4) + "\n".join(since()[-8:]))
    _check_child_in_sandbox(booted, service, "shairport-sync", check)
    client = booted.net([ATVREMOTE, "--manual", "--address", "127.0.0.1", "--port", "5000", "--protocol", "raop",
                         "--id", "lightorgan-test", f"stream_file={signals['tones.wav']}"], timeout=90)
    check("the AirPlay client streamed the tones into the root", client.returncode == 0,
          tail(client.stdout + client.stderr, 4))

    def lit(band):
        return [line for line in since() if re.fullmatch(r"[0-9.]+ [0-9]+ [0-9]+ [0-9]+", line)
                and int(line.split()[1 + band]) >= 128]
    check("the lamps follow the stream: bass, mid and treble each lit",
          wait_for(lambda: all(lit(band) for band in range(3)), 15), "\n".join(since()[-12:]))
    check("the log says AirPlay played", any("AirPlay: playing" in line for line in since()), "\n".join(since()[-8:]))
    _check_nothing_refused(booted, service, "shairport-sync", since, check)
    _restore(booted, service)


def _probe(booted, properties):
    command = ["systemd-run", "--wait", "--pipe", "--quiet", "--collect"]
    for name, value in properties:
        command += ["-p", f"{name}={value}"]
    result = booted.run([*command, "/usr/local/bin/sandbox-probe"], timeout=60)
    return dict(line.split(None, 1) for line in result.stdout.splitlines() if " " in line or "\t" in line), result


@pytest.mark.slow
def test_the_units_sandbox_refuses_what_the_receiver_no_longer_needs(booted, check):
    if not check("systemd-nspawn booted the root", booted.state == "running", booted.state):
        return
    properties = _unit_properties(os.path.join(booted.root, UNIT))
    print("the unit's properties:", properties)
    inside, result = _probe(booted, properties)
    control, control_result = _probe(booted, [("User", "lightorgan"), ("Group", "lightorgan")])
    print("in the unit's sandbox:", inside, "\nas lightorgan without it:", control)
    check("the probe ran with the unit's properties (systemd-run -p …)", inside, tail(result.stderr, 6))
    check("the probe ran as the same user without them", control, tail(control_result.stderr, 6))
    refusals = [("ptrace", "EPERM", "a system call outside the filter (ptrace, in @debug)"),
                ("personality", "EPERM", "another execution domain (LockPersonality)"),
                ("unshare-user", "EPERM", "a user namespace (RestrictNamespaces)"),
                ("socket-packet", "EAFNOSUPPORT", "a packet socket (RestrictAddressFamilies)"),
                ("mmap-wx", "EPERM", "writable and executable memory (MemoryDenyWriteExecute)"),
                ("proc-pid-1", "ENOENT", "/proc/1, another user's process (ProtectProc=invisible)"),
                ("proc-cpuinfo", "ENOENT", "/proc/cpuinfo (ProcSubset=pid)")]
    for name, errno_name, what in refusals:
        check(f"refused in the unit's sandbox ({errno_name}): {what}", inside.get(name) == errno_name,
              f"sandbox {inside.get(name)}")
        check(f"not refused without it: {what}", control.get(name) != errno_name, f"control {control.get(name)}")
    check("netlink sockets stay allowed (getifaddrs)", inside.get("socket-netlink") == "ok", inside.get("socket-netlink"))
    check("in the sandbox no other process is visible in /proc (at most the probe's own)",
          int(inside.get("proc-processes", "99")) <= 1 < int(control.get("proc-processes", "0")),
          f"sandbox {inside.get('proc-processes')}, control {control.get('proc-processes')}")
    check("the sandbox's umask is 0077", inside.get("umask") == "0077", f"umask {inside.get('umask')}")
    check("the sandbox's capability bounding set is empty", int(inside.get("CapBnd:", "1").strip(), 16) == 0,
          f"CapBnd {inside.get('CapBnd:')}")
    # DevicePolicy=closed: only when the root's systemd can use the devices controller (not in every container).
    print(f"/dev/net/tun: sandbox {inside.get('open-tun')}, control {control.get('open-tun')}")

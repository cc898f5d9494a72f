"""The Bluetooth part of the kernel-device guest (support/kernel_vm.py, test_bluetooth.py): a Pi that is a Bluetooth
speaker and a phone that pairs with it and plays, linked by BlueZ's btvirt (two virtual controllers: hci0 the Pi's,
hci1 the phone's), with no radio.

What runs comes from trixie (debian_roots.bluetooth_root: BlueZ 5.82, BlueALSA 4.3; bookworm's BlueZ 5.66 answers a
phone's first A2DP set-up with the wrong transaction label): only the files the guest needs are copied, under /bt in
the initramfs, where guests/bluetooth.sh runs them in a chroot: the system bus, bluetoothd, btvirt, two bluealsa
daemons (the Pi's A2DP sink, the phone's A2DP source), the receiver (the tested executable, with trixie's libraries)
and the phone (guests/bt_phone.py, python3 with python3-dbus), plus the tones the phone plays.

Facts measured here (../shared/guides/bluetooth.md has the spike's): the kernel's Bluetooth modules load in the order
`modprobe --show-depends` gives for hci_vhci and the crypto ones SMP needs (ecb, cmac, ccm, algif_hash,
algif_skcipher); without ecb btvirt fails ("Failed to open Virtual HCI device").
"""
import os
import shutil
import subprocess

from support import debian_roots

HERE = os.path.dirname(os.path.abspath(__file__))
GUESTS = os.path.join(os.path.dirname(HERE), "guests")
# The kernel modules besides the guest's own, by the names modprobe resolves with their dependencies.
MODULES = ["hci_vhci", "algif_hash", "algif_skcipher", "ecb", "cmac", "ccm"]
PROGRAMS = ["/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/dbus-uuidgen", "/usr/libexec/bluetooth/bluetoothd",
            "/usr/bin/btvirt", "/usr/bin/bluealsa", "/usr/bin/aplay", "/usr/bin/env", "/usr/bin/python3.13",
            "/usr/bin/sh", "/usr/bin/cat", "/usr/bin/sleep"]
TRIPLET = "x86_64-linux-gnu"
PLUGINS = [f"/usr/lib/{TRIPLET}/alsa-lib/libasound_module_pcm_bluealsa.so",
           f"/usr/lib/{TRIPLET}/alsa-lib/libasound_module_ctl_bluealsa.so"]
FOLDERS = ["etc", "usr/share/dbus-1", "usr/share/alsa", "usr/lib/python3/dist-packages"]
# Of python3.13's standard library, what the phone does not load.
PYTHON_LEFT_OUT = ["test", "idlelib", "tkinter", "ensurepip", "pydoc_data", "lib2to3", "turtledemo", "unittest",
                   "config-3.13-x86_64-linux-gnu", "lib-dynload/_test*"]
# The phone's tones: (Hz, seconds), stereo s16le at -6 dBFS, then silence; at 48 kHz, the rate the phone's BlueALSA
# sets the stream up with (played at another, its ALSA plugin would have the codec set up anew first).
TONES = [(60, 1.5), (1000, 1.5), (8000, 1.5)]
RATE = 48000


def _libraries(root, program):
    """The shared libraries `program` (a path inside `root`) loads, as paths inside `root`."""
    shown = subprocess.run(["chroot", root, "/usr/bin/ldd", program], capture_output=True, text=True).stdout
    paths = []
    for line in shown.splitlines():
        words = line.split()
        if "=>" in words and len(words) > words.index("=>") + 1 and words[words.index("=>") + 1].startswith("/"):
            paths.append(words[words.index("=>") + 1])
        elif words and words[0].startswith("/"):
            paths.append(words[0])
    return paths


def _copy(root, path, destination):
    """Copies `path` of `root` (symbolic links followed within it) to the same path under `destination`, its folders
    made on the way (merged /usr: /lib is /usr/lib)."""
    source = root + path
    while os.path.islink(source):
        target = os.readlink(source)
        source = os.path.normpath(os.path.join(os.path.dirname(source), target)) if not target.startswith("/") \
            else root + target
    for short in ("/lib/", "/bin/", "/sbin/", "/lib64/"):
        if path.startswith(short):
            path = "/usr" + path
    target = destination + path
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if not os.path.exists(target):
        shutil.copy2(source, target)


def tones(path, segments=TONES, silence=1.0):
    """`segments` ((Hz, seconds)) then `silence` seconds of it, raw s16le stereo at RATE, at -6 dBFS."""
    import numpy
    parts = []
    for frequency, seconds in segments:
        t = numpy.arange(int(RATE * seconds)) / RATE
        parts.append(0.5 * 32767 * numpy.sin(2 * numpy.pi * frequency * t))
    parts.append(numpy.zeros(int(RATE * silence)))
    samples = numpy.concatenate(parts).astype("<i2")
    with open(path, "wb") as file:
        file.write(numpy.repeat(samples, 2).tobytes())


def add_to(guest_root, lightorgan, version, modules):
    """Adds the Bluetooth userland under `guest_root`/bt (see the module's text), guests/bluetooth.sh as
    /bin/bluetooth.sh, and the kernel modules' paths to `modules` (a list, in load order, no repeats)."""
    root = debian_roots.bluetooth_root()
    destination = os.path.join(guest_root, "bt")
    os.makedirs(destination)
    for link, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
        os.symlink(target, os.path.join(destination, link))
    for folder in ("usr/bin", "usr/sbin", "usr/lib64", "proc", "sys", "dev", "run", "tmp", "var/lib/bluetooth",
                   "var/lib/bluealsa", "opt/bt"):
        os.makedirs(os.path.join(destination, folder), exist_ok=True)
    # The receiver, with trixie's libraries: its name inside the root for ldd, once.
    inside = f"/tmp/lightorgan-{os.getpid()}"
    shutil.copy(lightorgan, root + inside)
    try:
        wanted = set(PROGRAMS + PLUGINS)
        libraries = set(_libraries(root, inside))
        for program in sorted(wanted):
            libraries.update(_libraries(root, program))
        python = os.path.join(root, "usr/lib/python3/dist-packages")
        for name in os.listdir(python):
            if name.endswith(".so"):
                libraries.update(_libraries(root, f"/usr/lib/python3/dist-packages/{name}"))
    finally:
        os.remove(root + inside)
    for path in sorted(wanted | libraries):
        _copy(root, path, destination)
    shutil.copy(lightorgan, os.path.join(destination, "usr/bin/lightorgan"))
    for folder in FOLDERS:
        parent = os.path.dirname(os.path.join(destination, folder))
        os.makedirs(parent, exist_ok=True)
        subprocess.run(["cp", "-a", os.path.join(root, folder), parent], check=True)
    ignored = shutil.ignore_patterns(*[name.split("/")[-1] for name in PYTHON_LEFT_OUT])
    shutil.copytree(os.path.join(root, "usr/lib/python3.13"), os.path.join(destination, "usr/lib/python3.13"),
                    ignore=ignored, symlinks=True)
    for module in os.listdir(os.path.join(root, "usr/lib/python3.13/lib-dynload")):
        for library in _libraries(root, f"/usr/lib/python3.13/lib-dynload/{module}"):
            _copy(root, library, destination)
    shutil.copy(os.path.join(GUESTS, "bt_phone.py"), os.path.join(destination, "opt/bt/bt_phone.py"))
    tones(os.path.join(destination, "opt/bt/tones.raw"))
    tones(os.path.join(destination, "opt/bt/burst.raw"), [(1000, 1.0)], silence=0)  # then the phone pauses
    shutil.copy(os.path.join(GUESTS, "bluetooth.sh"), os.path.join(guest_root, "bin/bluetooth.sh"))
    for name in MODULES:
        for module in _kernel_modules(version, name):
            if module not in modules:
                modules.append(module)


def _kernel_modules(version, name):
    shown = subprocess.run(["modprobe", "-S", version, "--show-depends", name], capture_output=True, text=True,
                           check=True).stdout
    return [line.split()[1] for line in shown.splitlines() if line.startswith("insmod ")]

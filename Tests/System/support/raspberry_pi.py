"""The emulated Raspberry Pi 3 and 4 of the Pi tests (test_raspberry_pi.py, test_strip_on_the_pi.py,
test_strip_cost_on_the_pi.py): the models, the boot files (Debian's arm64 kernel from sid's sysroot, its device trees,
one initramfs with the package), a boot that runs a guest script as /init until it says "PI: done", the boots the
session shares (`pi_boots`), and the package installed in Debian roots with apt.

- raspi3b: QEMU's Raspberry Pi 3 (TCG) boots Debian's arm64 kernel with its Pi 3 device tree: the real
  pinctrl-bcm2835 GPIO driver runs on QEMU's BCM2835 GPIO model. raspi4b: QEMU's Raspberry Pi 4 (BCM2711) with the
  same kernel's Pi 4 device tree; the tree's always-on block (…@7ef0xxxx), which QEMU does not map, is disabled in a
  copy (see MODELS).
- Both on QEMU 10 (from bookworm-backports in a private prefix: support/qemu_backports.py), for its raspi4b (9.0)
  and its BCM2835 SPI model (hw/ssi/bcm2835_spi.c, 10.0), which bookworm's QEMU 7.2 lacks: the device tree copy
  has SPI0 on as `dtparam=spi=on` makes it on a Pi (see `BootFiles.dtb`), and QEMU traces the SPI block's register
  writes to a file (support/ws2812_spi.py reads it).
- Three boots per session, whichever modules run (`pi_boots`): each model's whole boot, guests/raspi-init.sh's
  GPIO steps then guests/raspi-strip.sh's strip steps, for test_raspberry_pi.py and test_strip_on_the_pi.py; and
  the Pi 3's counted boot (QEMU's -icount; COUNTED_MODELS says why one model) for the strip's cost benchmark, then
  its 600-pixel frames with spidev.bufsiz raised, for test_strip_cost_on_the_pi.py and test_strip_on_the_pi.py.
- QEMU runs with no display and no audio backend (`-nodefaults`, the console on the first UART), so it loads none of
  its modules: another QEMU's modules in the system's folder (qemu-system-gui 7.2's audio-pa.so) are never probed.
- The initramfs: busybox, the package unpacked, openssl and the libraries both load from the bookworm root the
  package was installed in (the oldest glibc it must run on), Debian's snapserver and snapclient with theirs (the
  cost benchmark's Snapcast run), configfs, gpio-sim and spi-bcm2835 from the kernel's modules, and the guest
  scripts: guests/raspi-init.sh as /init, guests/raspi-strip.sh as /strip-init.
The roots, the Pi's kernel and QEMU 10 are fetched once and cached in ~/.cache/lightorgan (support/debian_roots.py,
support/qemu_backports.py).
"""
import concurrent.futures
import glob
import gzip
import lzma
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

from support import boot_counts, debian_roots, qemu_backports
from support.packages import package_path
from support.processes import Process

GUESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "guests")
# Modules of the kernel loaded by the guests (.ko.xz in its modules' folder), when it has them as modules: spidev
# is built into Debian's arm64 kernel (modules.builtin), spi-bcm2835 is a module.
MODULES = ("kernel/fs/configfs/configfs", "kernel/drivers/gpio/gpio-sim", "kernel/drivers/spi/spi-bcm2835",
           "kernel/drivers/spi/spidev")
# The strip's SPI device in the device tree: spidev binds to it by a compatible it knows (it refuses a bare
# "spidev"); the driver is asked for at most this clock, above the strip's 2.4 MHz.
SPI_NODE = "/soc/spi@7e204000"
SPI_DEVICE = {"compatible": "rohm,dh2228fv", "spi-max-frequency": 3_000_000}


def fetch_up_front(request):
    """The roots, the Pi's kernel (sid's arm64 sysroot) and QEMU 10. What apt needs to install the package in a
    root is fetched beside the tests, by the set-up that installs it (`Installs`)."""
    debian_roots.arm64_sysroot()
    qemu_backports.qemu()
    for suite in debian_roots.SUITES:
        debian_roots.arm64_root(suite)


# -- the package installed in a root -------------------------------------------------------------

class Installs:
    """The package installed in a throw-away copy of each suite's root, once per suite for the session: apt
    (guests/debian-root.sh's `install` step) beside the tests when `start` was called (support/beside.py), then the
    installed sender and receiver (its `run` step, timed in real time) in the foreground. The copy is of the
    release tests' root with the package's Depends (support/apt_release.py's `PreparedRoots`, which resolved them
    with `apt-get satisfy` from the suite's archive): the Depends are installed through qemu-user once per suite,
    not once per root that needs them."""

    def __init__(self, folder, config, beside, prepared_roots):
        # The arm64 package, asked for by each install beside the tests (support/packages.py: it may be being built).
        self.folder, self.config, self.beside, self.done = folder, config, beside, {}
        self.prepared_roots = prepared_roots

    def start(self, suite):
        self.beside.start(self._name(suite), self._installer(suite))

    def root(self, suite):
        """The root with the package installed by apt (made beside the tests, or now), before the `run` step."""
        return self.beside.result(self._name(suite), self._installer(suite))[0]

    def installed(self, suite):
        if suite not in self.done:
            started = time.monotonic()
            root, output = self.beside.result(self._name(suite), self._installer(suite))
            output += debian_roots.in_root(root, ["bash", "/tmp/debian-root.sh", "run"], timeout=600).stdout
            with open(os.path.join(self.folder, f"{suite}.txt"), "w") as log:
                log.write(output)
            lines = [line[len("ROOT: "):] for line in output.splitlines() if line.startswith("ROOT: ")]
            print("\n".join(f"{suite}: {line}" for line in lines))
            if not any(line.startswith("apt status") for line in lines):
                # The root could not even be used: what went wrong is in the other lines.
                print("\n".join(f"{suite}: {line}" for line in output.splitlines()[-5:]))
            seconds = self.beside.seconds.get(self._name(suite), 0) + time.monotonic() - started
            self.done[suite] = InstalledRoot(suite, root, lines, seconds)
        return self.done[suite]

    @staticmethod
    def _name(suite):
        return f"the package installed in the {suite} root"

    def _installer(self, suite):
        def make(wrapper):
            root, deb = os.path.join(self.folder, suite), package_path(self.config, "arm64")
            debian_roots.copy_root(suite, self.prepared_roots.template(suite, "arm64"), root, deb)
            shutil.copy(os.path.join(GUESTS, "debian-root.sh"), os.path.join(root, "tmp"))
            return root, debian_roots.in_root(root, ["bash", "/tmp/debian-root.sh", "install"], timeout=1800,
                                              wrapper=wrapper).stdout
        return make


class InstalledRoot:
    def __init__(self, suite, root, lines, seconds):
        self.suite, self.root, self.lines, self.seconds = suite, root, lines, seconds

    def said(self, pattern):
        """The first of its "ROOT:" lines that `pattern` (a regular expression) matches at its start."""
        return next((match for match in (re.match(pattern, line) for line in self.lines) if match), None)


@pytest.fixture(scope="session")
def installs(tmp_path_factory, request, beside, prepared_roots):
    folder = tmp_path_factory.mktemp("pi-roots")
    installs = Installs(str(folder), request.config, beside, prepared_roots)
    yield installs
    for suite in debian_roots.SUITES:  # two roots of a few hundred MB each (their logs stay), once made
        if beside.done(installs._name(suite)):
            shutil.rmtree(folder / suite, ignore_errors=True)


# -- the emulated Raspberry Pi 3 and 4 -----------------------------------------------------------

class Model:
    """An emulated Raspberry Pi: QEMU's machine, the device tree of Debian's kernel for it, what its device
    tree calls it, and how the kernel's driver for its GPIO block labels the chip."""

    def __init__(self, machine, short, name, dtb, memory, label, lines, console="", unmapped=None, spi_options=""):
        self.machine, self.short, self.name, self.dtb = machine, short, name, dtb
        self.memory, self.label, self.lines = memory, label, lines
        self.console, self.unmapped, self.spi_options = console, unmapped, spi_options


MODELS = {
    # QEMU's raspi machines take only the board's own RAM size (-m).
    "raspi3b": Model("raspi3b", "Pi 3", "Raspberry Pi 3 Model B", "broadcom/bcm2837-rpi-3-b.dtb", "1G",
                     "pinctrl-bcm2835", 54),
    # QEMU 10's raspi4b maps nothing at 0xfef00000 (the BCM2711's always-on block: its clock, the brcmstb L2
    # interrupt controller, both HDMI and their DDC I2C controllers, /soc/...@7ef0xxxx in the device tree), and
    # the first access there is a synchronous external abort: with the stock Pi 4 tree Debian's kernel dies in
    # brcmstb_l2_intc_probe, then in brcmstb_i2c_probe, before the console exists. QEMU itself disables the
    # devices it lacks (pcie, rng200, thermal, genet: its "has been disabled!" warnings); these are disabled the
    # same way (status = "disabled", with fdtput), nothing else of the tree is touched. earlycon shows such a
    # panic on the console before the PL011 driver takes it.
    # SPI on the Pi 4: spi-bcm2835's interrupt mode stalls after 128 bytes on QEMU's model there, so every
    # transfer is made in polling mode (its polling_limit_us, 30 µs by default, raised to a second).
    "raspi4b": Model("raspi4b", "Pi 4", "Raspberry Pi 4 Model B", "broadcom/bcm2711-rpi-4-b.dtb", "2G",
                     "pinctrl-bcm2711", 58, console="earlycon=pl011,mmio32,0xfe201000 ", unmapped="7ef0",
                     spi_options="spi-bcm2835.polling_limit_us=1000000 "),
}


BOOT_LIMIT = 900  # seconds a boot may run, its guest script included, before QEMU is stopped


class RaspberryPi:
    """What the emulated Pi's /init printed: its "PI:" lines; the path of its SPI trace."""

    def __init__(self, model, kernel, console, seconds, trace=None, folder=None):
        self.model, self.kernel, self.console, self.seconds = model, kernel, console, seconds
        self.trace, self.folder = trace, folder
        self.lines = [line[len("PI: "):] for line in console.splitlines() if line.startswith("PI: ")]

    def said(self, pattern):
        """The first "PI:" line that `pattern` matches at its start (a re.Match), or None."""
        return next((match for match in (re.match(pattern, line) for line in self.lines) if match), None)

    @property
    def chip(self):
        """The Pi's controller as a wrong chip's error lists it: "gpiochip0 [pinctrl-bcm2835] (54 lines)"
        (on a Pi 4: "[pinctrl-bcm2711] (58 lines)")."""
        chips = self.said(r"chips (.*)")
        found = re.search(rf"([a-z0-9_-]+) \[{re.escape(self.model.label)}\] \({self.model.lines} lines\)",
                          chips[1]) if chips else None
        return found[1] if found else None

    def show(self):
        """Its "PI:" lines (in a failed test's output), or the console's end when there are none."""
        print("\n".join(f"PI: {line}" for line in self.lines) or self.console[-3000:])


def _monitor_command(path, command):
    """Sends `command` to the QEMU human monitor listening on the Unix socket `path`; whether it was sent."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(5)
            connection.connect(path)
            connection.recv(4096)  # the banner and the first prompt
            connection.sendall(command.encode() + b"\n")
            connection.recv(4096)  # its echo: the command has been read
        return True
    except OSError as error:
        print(f"QEMU monitor {path}: {command}: {error}", flush=True)
        return False


def _needed_libraries(binary):
    output = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    return re.findall(r"Shared library: \[([^]]+)\]", output)


def _initramfs(folder, deb, sysroot, kernel_folder, bookworm, snapcast):
    """The Pi's initramfs (see the module's docstring), with snapserver and snapclient from the `snapcast` root.
    Returns the path of its gzipped cpio archive."""
    tree = os.path.join(folder, "initramfs")
    for part in ("usr/bin", "usr/sbin", "usr/lib/modules", "usr/lib/ssl", "usr/lib/aarch64-linux-gnu", "dev", "proc",
                 "sys", "tmp", "etc"):
        os.makedirs(os.path.join(tree, part), exist_ok=True)
    for link in ("bin", "sbin", "lib"):
        os.symlink(f"usr/{link}", os.path.join(tree, link))
    shutil.copy(os.path.join(sysroot, "usr/bin/busybox"), os.path.join(tree, "usr/bin/busybox"))
    os.symlink("busybox", os.path.join(tree, "usr/bin/sh"))  # /init installs the other applets
    subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
    # openssl, a Depends of the package: the receiver makes its page's certificate with it, and /init opens the
    # page's WebSocket with `openssl s_client` (a page's load on the Pi, without a browser).
    shutil.copy(os.path.join(bookworm, "usr/bin/openssl"), os.path.join(tree, "usr/bin/openssl"))
    shutil.copy(os.path.join(bookworm, "usr/lib/ssl/openssl.cnf"), os.path.join(tree, "usr/lib/ssl/openssl.cnf"))
    for program in ("snapserver", "snapclient"):
        shutil.copy(os.path.join(snapcast, "usr/bin", program), os.path.join(tree, "usr/bin", program))
    # Each library from the package's install in the bookworm root, else from the snapcast root (a copy of the
    # same plain root with the two programs' Depends).
    places = [os.path.join(root, "usr/lib/aarch64-linux-gnu") for root in (bookworm, snapcast)]
    inside = os.path.join(tree, "usr/lib/aarch64-linux-gnu")
    queue = [os.path.join(tree, "usr/bin", program) for program in ("lightorgan", "openssl", "snapserver",
                                                                     "snapclient")]
    while queue:
        for library in _needed_libraries(queue.pop(0)):
            # A library in a folder of its own (libpulse's libpulsecommon, by its RUNPATH) goes there again.
            candidates = ((place, path) for place in places
                          for path in (os.path.join(place, library), *glob.glob(os.path.join(place, "*", library))))
            place, source = next(((place, path) for place, path in candidates if os.path.exists(path)),
                                 (places[0], os.path.join(places[0], library)))
            target = os.path.join(inside, os.path.relpath(source, place))
            if not os.path.exists(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy(source, target)
                queue.append(target)
    shutil.copy(os.path.join(places[0], "ld-linux-aarch64.so.1"), os.path.join(tree, "usr/lib/ld-linux-aarch64.so.1"))
    for module in MODULES:
        packed = os.path.join(kernel_folder, f"{module}.ko.xz")
        if os.path.exists(packed):
            with lzma.open(packed) as source, open(os.path.join(tree, "usr/lib/modules",
                                                                f"{os.path.basename(module)}.ko"), "wb") as target:
                shutil.copyfileobj(source, target)
    # A user without the `spi` group, for the strip's permission error (busybox su).
    with open(os.path.join(tree, "etc/passwd"), "w") as passwd:
        passwd.write("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/tmp:/bin/sh\n")
    with open(os.path.join(tree, "etc/group"), "w") as group:
        group.write("root:x:0:\nspi:x:999:\nnogroup:x:65534:\n")
    for script, name in (("raspi-init.sh", "init"), ("raspi-strip.sh", "strip-init")):
        shutil.copy(os.path.join(GUESTS, script), os.path.join(tree, name))
        os.chmod(os.path.join(tree, name), 0o755)
    archive = subprocess.run("find . | cpio -o -H newc --quiet", shell=True, cwd=tree, check=True,
                             capture_output=True).stdout
    initrd = os.path.join(folder, "initrd.gz")
    with gzip.open(initrd, "wb", compresslevel=1) as target:
        target.write(archive)
    return initrd


def _fdtput(dtb, *arguments):
    subprocess.run(["fdtput", dtb, *arguments], check=True)


class BootFiles:
    """Debian's arm64 kernel (the newest in sid's sysroot), its modules' folder, and the initramfs."""

    def __init__(self, sysroot, kernel, kernel_folder, initrd):
        self.sysroot, self.kernel, self.kernel_folder, self.initrd = sysroot, kernel, kernel_folder, initrd

    def dtb(self, model, folder):
        """A copy in `folder` of the model's device tree from the kernel package: on the Pi 4 with the devices
        QEMU does not map disabled (Model.unmapped); SPI0 on as the firmware's `dtparam=spi=on` turns it on
        (status okay, a spidev device at chip select 0; the Pi 4 chip select on GPIO 8 as Raspberry Pi's tree has
        it, without which the driver defers its probe there), but without its DMA channels: QEMU models no DMA
        for it."""
        dtb = os.path.join(self.sysroot, f"usr/lib/linux-image-{self.kernel}/{model.dtb}")
        copy = os.path.join(folder, os.path.basename(dtb))
        shutil.copy(dtb, copy)
        if model.unmapped:
            nodes = subprocess.run(["fdtget", "-l", copy, "/soc"], capture_output=True, text=True, check=True).stdout
            for node in nodes.split():
                if node.partition("@")[2].startswith(model.unmapped):
                    _fdtput(copy, "-t", "s", f"/soc/{node}", "status", "disabled")
                    print(f"{model.machine}: disabled /soc/{node} (QEMU does not map it)")
        _fdtput(copy, "-t", "s", SPI_NODE, "status", "okay")
        present = subprocess.run(["fdtget", "-p", copy, SPI_NODE], capture_output=True, text=True).stdout.split()
        for name in ("dmas", "dma-names"):
            if name in present:
                _fdtput(copy, "-d", SPI_NODE, name)
        if model.machine == "raspi4b":
            gpio = subprocess.run(["fdtget", copy, "/soc/gpio@7e200000", "phandle"], capture_output=True,
                                  text=True, check=True).stdout.strip()
            _fdtput(copy, "-t", "u", SPI_NODE, "cs-gpios", gpio, "8", "1")  # GPIO 8, active low
        leds = f"{SPI_NODE}/leds@0"
        _fdtput(copy, "-c", leds)
        _fdtput(copy, "-t", "s", leds, "compatible", SPI_DEVICE["compatible"])
        _fdtput(copy, "-t", "u", leds, "reg", "0")
        _fdtput(copy, "-t", "u", leds, "spi-max-frequency", str(SPI_DEVICE["spi-max-frequency"]))
        return copy

    def boot(self, model, folder, init="/init", parameters="", icount=None, wrapper=(), expired=None):
        """Boots `model` with `init` as the first process (rdinit), run until the guest says "PI: done" or
        panics (or 15 minutes); QEMU is stopped whatever happens. SPI0 is on, its register writes traced to
        folder/spi-trace.log. `parameters`: more of the kernel's command line. `icount`: QEMU
        counts instructions, each 2^icount ns of the guest's time (its vCPUs take turns on one host thread), so
        the guest's CPU times are its instructions, whatever else the host runs or how slow its devices are; and
        with sleep=off an idle guest's clock jumps to its next timer instead of following the host's clock, so no
        stall of QEMU on a busy host (at idle priority: seconds) shows in the guest as late timers. With sleep=on
        the counted boots beside the tests at idle priority timed the lamps' PWM at 140 Hz instead of 195.
        `wrapper`: the command QEMU runs through (support/beside.py's `chrt --idle 0`); `expired(seconds)`: whether
        the boot, running that long, is to be stopped (by default after BOOT_LIMIT). When the guest says "PI: trace may
        stop", QEMU's trace is turned off through its monitor (the counted boot's cost benchmark, after its large
        frames, counts its SPI transfers from the kernel's statistics: traced, its 100 frames a second made a 2 GB
        trace and took QEMU a third longer)."""
        qemu = qemu_backports.qemu()
        trace = os.path.join(folder, "spi-trace.log")
        monitor = os.path.join(folder, "monitor.sock")
        print(f"booting {self.kernel} on an emulated {model.name} (QEMU 10 -M {model.machine}, TCG, SPI traced"
              f"{f', icount shift={icount}' if icount is not None else ''}) {parameters}", flush=True)
        boot_counts.add(f"{model.machine}{' icount' if icount is not None else ''}")
        started = time.monotonic()
        command = [*qemu.command(), "-M", model.machine, "-m", model.memory, "-nodefaults", "-display", "none",
                   *(["-icount", f"shift={icount},sleep=off"] if icount is not None else []),
                   "-audio", "none", "-serial", "stdio", "-no-reboot",
                   "-kernel", os.path.join(self.kernel_folder, "vmlinuz"), "-dtb", self.dtb(model, folder),
                   "-initrd", self.initrd, "-append",
                   f"{model.console}console=ttyAMA0 rdinit={init} quiet panic=-1 "
                   f"{model.spi_options}{parameters}".strip(),
                   "-trace", f"memory_region_ops_write,file={trace}",
                   "-monitor", f"unix:{monitor},server=on,wait=off"]
        process = Process(folder, "console", command, env=qemu.env, wrapper=wrapper)
        expired = expired or (lambda seconds: seconds >= BOOT_LIMIT)
        tracing = True
        try:
            # Linux cannot power these machines off (nor reboot them after a panic): QEMU is stopped when the
            # guest says it is done, or panicked.
            while (process.alive() and not any(end in process.output() for end in ("PI: done", "Kernel panic"))
                   and not expired(time.monotonic() - started)):
                if tracing and "PI: trace may stop" in process.output():
                    tracing = not _monitor_command(monitor, "trace-event memory_region_ops_write off")
                time.sleep(0.5 if tracing else 2)
        finally:
            process.stop(timeout=5)
        console = process.output().replace("\r", "")
        pi = RaspberryPi(model, self.kernel, console, time.monotonic() - started, trace, folder)
        pi.show()
        return pi


@pytest.fixture(scope="session")
def boot_files(tmp_path_factory, installs, request, beside):
    """The kernel and one initramfs for both Pis and every guest script: a callable that returns the BootFiles,
    made once, beside the tests (support/beside.py) by the first boot that asks: the initramfs takes its libraries
    from the package's install in the bookworm root, itself made beside the tests."""
    def make(wrapper):
        folder = str(tmp_path_factory.mktemp("raspi-boot"))
        pi_package = package_path(request.config, "arm64")
        bookworm = installs.root("bookworm")
        sysroot = debian_roots.arm64_sysroot()
        modules = os.path.join(sysroot, "usr/lib/modules")
        kernel = sorted((name for name in os.listdir(modules) if name.endswith("-arm64")),
                        key=lambda name: [(0, int(part), "") if part.isdigit() else (1, 0, part)
                                          for part in re.split(r"[.-]", name)])[-1]
        kernel_folder = os.path.join(modules, kernel)
        snapcast = _snapcast_root(folder, pi_package, installs.prepared_roots.template("bookworm", "arm64"), wrapper)
        return BootFiles(sysroot, kernel, kernel_folder,
                         _initramfs(folder, pi_package, sysroot, kernel_folder, bookworm, snapcast))
    return lambda: beside.result(BOOT_FILES, make)


def _snapcast_root(folder, deb, template, wrapper):
    """A copy of `template`, the bookworm arm64 root with the package's Depends, with Debian's snapserver and
    snapclient installed (from the cached .debs, fetched first when the cache lacks them), for the cost benchmark's
    Snapcast run: the initramfs takes the two programs and their libraries from it."""
    root, cached = os.path.join(folder, "snapcast-root"), debian_roots.arm64_root("bookworm")
    debian_roots.fetch_depends("bookworm", cached, deb, extra=("snapserver", "snapclient"), wrapper=wrapper)
    debian_roots.copy_root("bookworm", template, root, deb, sources_from=cached)
    result = debian_roots.in_root(root, ["apt-get", "install", "-y", "-q", "--no-install-recommends", "snapserver",
                                         "snapclient"], timeout=1800, wrapper=wrapper)
    if result.returncode != 0:
        raise RuntimeError(f"bookworm: installing snapserver and snapclient failed:\n{result.stdout[-2000:]}")
    return root


BOOT_FILES = "the Pi's kernel and initramfs"


# -- the boots the session shares -----------------------------------------------------------------

# The counted boot's kernel command line: the cost benchmark's (guests/raspi-strip.sh's lightorgan.cost; CPU 1
# nohz_full, so the kernel counts user and system time exactly; the SPI driver polling, so its FIFO feeding is the
# strip writer's system time), and spidev's transfer limit raised for the 600-pixel frames that follow it.
COUNTED_PARAMETERS = "lightorgan.cost nohz_full=1 spi-bcm2835.polling_limit_us=1000000 spidev.bufsiz=32768"
COUNTED_ICOUNT = 1  # -icount shift=1: 2 ns of the guest's time an instruction
# The counted boot runs on the Pi 3 only. Under -icount the guest's clock counts instructions, whatever the model:
# the Pi 3's and the Pi 4's counted boots gave the same figures (receiver user 0.77 and 0.73, system 1.63 and 1.60 %
# of a core, the strip's ratio 29/23 and 29/22 ticks, the PWM 195 Hz on both; 7856416 … c4c82b0), for 160-200 CPU
# seconds each. The Pi 3 is the one to keep: its SoC is the Zero 2 W's, the slowest board the receiver supports.
# The Pi 4's SPI (polling, as in every counted boot) and its frames stay tested in its whole boot.
COUNTED_MODELS = ("raspi3b",)


class Boots:
    """Each model's whole boot and the counted boot of COUNTED_MODELS, made once for the session when a test first
    asks for them, whichever module asks; the counted boot beside the tests from the session's start
    (`prepare_beside`)."""

    def __init__(self, tmp_path_factory, boot_files, beside):
        self.tmp_path_factory, self.boot_files, self.beside, self.done = tmp_path_factory, boot_files, beside, {}

    def whole(self, machine):
        """The model (a MODELS key) booted with guests/raspi-init.sh as /init: the GPIO steps, then
        guests/raspi-strip.sh's route, the receiver's strip, test-leds, the page's check and the errors. One at a
        time: its vCPUs run on the host's cores in real time, and its PWM is timed in real time. The counted boots
        may go on beside it at idle priority (SCHED_IDLE, which any of its threads preempts at once): they take only
        the CPU it leaves idle, about half of the machine, and their clocks count instructions."""
        if (machine, "whole") not in self.done:
            self.done[machine, "whole"] = self._boot(machine, "whole", init="/init")
        return self.done[machine, "whole"]

    def counted(self, machine):
        """The model booted with guests/raspi-strip.sh as /init under -icount: the cost benchmark, then the
        600-pixel frames, for each of COUNTED_MODELS at once, beside the tests from the session's start (or when
        one is first asked for): under -icount a QEMU runs all its vCPUs on one host thread and its guest's clock
        counts instructions, so it takes one core and what else the host runs does not change its figures
        (measured alone, beside two CPU hogs, and beside another counted boot): it can run at idle priority while
        the tests run."""
        return self.beside.result(COUNTED, self._counted_boots)[machine]

    def start_counted(self):
        """Starts the counted boots beside the tests (support/beside.py)."""
        self.beside.start(COUNTED, self._counted_boots)

    def _counted_boots(self, wrapper):
        files = self.boot_files()
        started = time.monotonic()

        def expired(seconds):
            # At idle priority a boot takes as long as the tests leave it CPU: four times BOOT_LIMIT from its
            # start; from the moment a test waits for it, BOOT_LIMIT from then (or from its start, if later).
            raised = self.beside.raised_at(COUNTED)
            limit = BOOT_LIMIT if raised else 4 * BOOT_LIMIT
            return self.beside.stopping.is_set() or time.monotonic() - max(raised or started, started) >= limit

        def boot(name):
            return self._boot(name, "counted", files=files, init="/strip-init", parameters=COUNTED_PARAMETERS,
                              icount=COUNTED_ICOUNT, wrapper=wrapper, expired=expired)
        with concurrent.futures.ThreadPoolExecutor(len(COUNTED_MODELS)) as pool:
            return dict(zip(COUNTED_MODELS, pool.map(boot, COUNTED_MODELS)))

    def _boot(self, machine, kind, files=None, **options):
        folder = str(self.tmp_path_factory.mktemp(f"{machine}-{kind}"))
        return (files or self.boot_files()).boot(MODELS[machine], folder, **options)


COUNTED = "the counted Pi boots"
# The fixtures of the tests that judge the counted boots (test_strip_cost_on_the_pi.py, test_strip_on_the_pi.py).
COUNTED_FIXTURES = ("counted_strip_pi", "large_strip_pi")


@pytest.fixture(scope="session")
def pi_boots(tmp_path_factory, boot_files, beside):
    """Boots: each model's whole boot and the counted boot, each booted once for the session."""
    return Boots(tmp_path_factory, boot_files, beside)


def prepare_beside(request, beside):
    """Beside the tests from the session's start: apt in the roots, when a selected test judges them; the counted
    boots, when a selected test judges them (their boot files, from the bookworm root, are made first, by them)."""
    def selected(*fixtures):
        return any(name in item.fixturenames for item in request.session.items for name in fixtures)
    if selected("installed_root"):
        for suite in debian_roots.SUITES:
            request.getfixturevalue("installs").start(suite)
    if selected(*COUNTED_FIXTURES):
        request.getfixturevalue("pi_boots").start_counted()

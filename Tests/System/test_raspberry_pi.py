"""The arm64 package (scripts/build-pi) where a Pi owner meets it, without a Pi.

- apt: `apt install ./lightorgan_*_arm64.deb` in plain Debian bookworm and trixie arm64 roots (the C
  libraries of Raspberry Pi OS bookworm and trixie; programs run through qemu-user, no systemd running,
  no network: the lists and .debs are fetched up front): apt resolves the Depends, postinst makes the
  lightorgan user in group gpio, and the installed lightorgan receives frames from its own sender there
  (guests/debian-root.sh).
- raspi3b: QEMU's Raspberry Pi 3 (TCG) boots Debian's arm64 kernel with its Pi 3 device tree, so the real
  pinctrl-bcm2835 GPIO driver runs; the packaged binary with bookworm's libraries (glibc 2.36) drives
  BCM 5, 6, 13 from frames sent inside the VM, read back from the kernel side (guests/raspi-init.sh, the
  VM's /init, prints "PI: ..." lines that the tests here judge).
- raspi4b: the same on QEMU's Raspberry Pi 4 (BCM2711, from QEMU 10 of bookworm-backports in a private
  prefix: support/qemu_backports.py) with the same kernel's Pi 4 device tree: the same driver registers as
  pinctrl-bcm2711 (58 lines) there, on QEMU's BCM2838 GPIO model; the tree's always-on block (…@7ef0xxxx), which
  QEMU does not map, is disabled in a copy (see MODELS). Every Pi test runs on both machines.
The roots, the Pi's kernel and QEMU 10 are fetched once and cached in ~/.cache/lightorgan
(support/debian_roots.py, support/qemu_backports.py).
"""
import gzip
import lzma
import os
import re
import shutil
import subprocess
import time

import pytest

from support import debian_roots, qemu_backports
from support.processes import Process

pytestmark = [pytest.mark.pi, pytest.mark.slow, pytest.mark.timeout(1800)]

GUESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guests")


def fetch_up_front(request):
    """The roots, the Pi's kernel (sid's arm64 sysroot), QEMU 10 for the Pi 4 and, per root, what apt needs to
    install the package."""
    deb = request.getfixturevalue("pi_package")
    debian_roots.arm64_sysroot()
    qemu_backports.qemu()
    for suite in debian_roots.SUITES:
        debian_roots.fetch_depends(suite, debian_roots.arm64_root(suite), deb)


# -- the package installed in a root -------------------------------------------------------------

class Installs:
    """The package installed in a throw-away copy of each suite's root, once per suite for the module."""

    def __init__(self, folder, deb):
        self.folder, self.deb, self.done = folder, deb, {}

    def installed(self, suite):
        if suite not in self.done:
            root = os.path.join(self.folder, suite)
            started = time.monotonic()
            debian_roots.copy_root(suite, debian_roots.arm64_root(suite), root, self.deb)
            shutil.copy(os.path.join(GUESTS, "debian-root.sh"), os.path.join(root, "tmp"))
            result = debian_roots.in_root(root, ["bash", "/tmp/debian-root.sh"], timeout=1200)
            output = result.stdout
            with open(os.path.join(self.folder, f"{suite}.txt"), "w") as log:
                log.write(output)
            lines = [line[len("ROOT: "):] for line in output.splitlines() if line.startswith("ROOT: ")]
            print("\n".join(f"{suite}: {line}" for line in lines))
            if not any(line.startswith("apt status") for line in lines):
                # The root could not even be used: what went wrong is in the other lines.
                print("\n".join(f"{suite}: {line}" for line in output.splitlines()[-5:]))
            self.done[suite] = InstalledRoot(suite, root, lines, time.monotonic() - started)
        return self.done[suite]


class InstalledRoot:
    def __init__(self, suite, root, lines, seconds):
        self.suite, self.root, self.lines, self.seconds = suite, root, lines, seconds

    def said(self, pattern):
        """The first of its "ROOT:" lines that `pattern` (a regular expression) matches at its start."""
        return next((match for match in (re.match(pattern, line) for line in self.lines) if match), None)


@pytest.fixture(scope="module")
def installs(tmp_path_factory, pi_package):
    folder = tmp_path_factory.mktemp("pi-roots")
    yield Installs(str(folder), pi_package)
    for suite in debian_roots.SUITES:  # two roots of a few hundred MB each (their logs stay)
        shutil.rmtree(folder / suite, ignore_errors=True)


@pytest.fixture(scope="module", params=debian_roots.SUITES)
def installed_root(request, installs):
    return installs.installed(request.param)


def test_apt_installs_the_package_in_a_plain_debian_root(installed_root, pi_package, check, figure):
    suite = installed_root.suite
    figure(f"{suite} root: apt install and runs in {installed_root.seconds:.0f} s")
    said = installed_root.said
    check(f"{suite}: apt install ./{os.path.basename(pi_package)} resolves the Depends and installs",
          said(r"apt status 0\b"), "; ".join(line for line in installed_root.lines if line.startswith("apt ")))
    check(f"{suite}: the package is installed and configured (postinst without systemd)",
          said(r"dpkg install ok installed"))
    check(f"{suite}: postinst made the system user lightorgan, in group gpio",
          said(r"user uid=[0-9]+\(lightorgan\) gid=[0-9]+\(lightorgan\) groups=.*\(gpio\)"))
    check(f"{suite}: /etc/lightorgan/lightorgan.yaml is a conffile with output: gpio",
          said(r"conffile /etc/lightorgan/lightorgan.yaml output gpio"))
    check(f"{suite}: the systemd unit runs the packaged binary",
          said(r"unit ExecStart=/usr/bin/lightorgan receive --config /etc/lightorgan/lightorgan.yaml"))
    check(f"{suite}: the installed lightorgan runs (--help)", said(r"help OVERVIEW: "))


def test_installed_receiver_shows_the_installed_senders_frames(installed_root, check):
    suite = installed_root.suite
    match = installed_root.said(r"receiver status 0 frames ([0-9]+) raw frame ([0-9]+)")
    count, raw = (int(match[1]), int(match[2])) if match else (0, 0)
    check(f"{suite}: the installed receiver shows frames from the installed sender ({count}) and a raw 3-byte "
          "frame, and ends on SIGTERM", count >= 50 and raw >= 1,
          "" if match else next((line for line in installed_root.lines if line.startswith("receiver")), "no end"))


# -- the emulated Raspberry Pi 3 and 4 -----------------------------------------------------------

class Model:
    """An emulated Raspberry Pi: QEMU's machine, the device tree of Debian's kernel for it, what its device
    tree calls it, and how the kernel's driver for its GPIO block labels the chip."""

    def __init__(self, machine, short, name, dtb, memory, label, lines, console="", unmapped=None):
        self.machine, self.short, self.name, self.dtb = machine, short, name, dtb
        self.memory, self.label, self.lines = memory, label, lines
        self.console, self.unmapped = console, unmapped

    def qemu(self):
        """(command prefix, extra environment) of the QEMU that has this machine."""
        if self.machine == "raspi3b":
            return ["qemu-system-aarch64"], None  # bookworm's QEMU 7.2, as always
        qemu = qemu_backports.qemu()  # raspi4b came in QEMU 9.0
        return qemu.command(), qemu.env


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
    "raspi4b": Model("raspi4b", "Pi 4", "Raspberry Pi 4 Model B", "broadcom/bcm2711-rpi-4-b.dtb", "2G",
                     "pinctrl-bcm2711", 58, console="earlycon=pl011,mmio32,0xfe201000 ", unmapped="7ef0"),
}


class RaspberryPi:
    """What the emulated Pi's /init printed: its "PI:" lines."""

    def __init__(self, model, kernel, console, seconds):
        self.model, self.kernel, self.console, self.seconds = model, kernel, console, seconds
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


def _needed_libraries(binary):
    output = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    return re.findall(r"Shared library: \[([^]]+)\]", output)


def _initramfs(folder, deb, sysroot, kernel_folder, bookworm):
    """The Pi's initramfs: busybox, the package unpacked, openssl and the libraries both load from the
    bookworm root the package was installed in (the oldest glibc it must run on), configfs and gpio-sim,
    and guests/raspi-init.sh as /init. Returns the path of its gzipped cpio archive."""
    tree = os.path.join(folder, "initramfs")
    for part in ("usr/bin", "usr/sbin", "usr/lib/modules", "usr/lib/ssl", "usr/lib/aarch64-linux-gnu", "dev", "proc",
                 "sys", "tmp"):
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
    libraries = os.path.join(bookworm, "usr/lib/aarch64-linux-gnu")
    inside = os.path.join(tree, "usr/lib/aarch64-linux-gnu")
    queue = [os.path.join(tree, "usr/bin/lightorgan"), os.path.join(tree, "usr/bin/openssl")]
    while queue:
        for library in _needed_libraries(queue.pop(0)):
            if not os.path.exists(os.path.join(inside, library)):
                shutil.copy(os.path.join(libraries, library), os.path.join(inside, library))
                queue.append(os.path.join(inside, library))
    shutil.copy(os.path.join(libraries, "ld-linux-aarch64.so.1"), os.path.join(tree, "usr/lib/ld-linux-aarch64.so.1"))
    for module in ("kernel/fs/configfs/configfs", "kernel/drivers/gpio/gpio-sim"):
        packed = os.path.join(kernel_folder, f"{module}.ko.xz")
        if os.path.exists(packed):
            with lzma.open(packed) as source, open(os.path.join(tree, "usr/lib/modules",
                                                                f"{os.path.basename(module)}.ko"), "wb") as target:
                shutil.copyfileobj(source, target)
    shutil.copy(os.path.join(GUESTS, "raspi-init.sh"), os.path.join(tree, "init"))
    os.chmod(os.path.join(tree, "init"), 0o755)
    archive = subprocess.run("find . | cpio -o -H newc --quiet", shell=True, cwd=tree, check=True,
                             capture_output=True).stdout
    initrd = os.path.join(folder, "initrd.gz")
    with gzip.open(initrd, "wb", compresslevel=1) as target:
        target.write(archive)
    return initrd


class BootFiles:
    """Debian's arm64 kernel (the newest in sid's sysroot), its modules' folder, and the initramfs."""

    def __init__(self, sysroot, kernel, kernel_folder, initrd):
        self.sysroot, self.kernel, self.kernel_folder, self.initrd = sysroot, kernel, kernel_folder, initrd

    def dtb(self, model, folder):
        """The model's device tree from the kernel package; for the Pi 4 a copy in `folder` with the devices
        that QEMU does not map disabled (Model.unmapped)."""
        dtb = os.path.join(self.sysroot, f"usr/lib/linux-image-{self.kernel}/{model.dtb}")
        if not model.unmapped:
            return dtb
        copy = os.path.join(folder, os.path.basename(dtb))
        shutil.copy(dtb, copy)
        nodes = subprocess.run(["fdtget", "-l", copy, "/soc"], capture_output=True, text=True, check=True).stdout
        for node in nodes.split():
            if node.partition("@")[2].startswith(model.unmapped):
                subprocess.run(["fdtput", "-t", "s", copy, f"/soc/{node}", "status", "disabled"], check=True)
                print(f"{model.machine}: disabled /soc/{node} (QEMU does not map it)")
        return copy


@pytest.fixture(scope="module")
def boot_files(tmp_path_factory, installs, pi_package):
    """The kernel and one initramfs for both Pis (the same guest runs on each)."""
    folder = str(tmp_path_factory.mktemp("raspi-boot"))
    bookworm = installs.installed("bookworm").root
    sysroot = debian_roots.arm64_sysroot()
    modules = os.path.join(sysroot, "usr/lib/modules")
    kernel = sorted((name for name in os.listdir(modules) if name.endswith("-arm64")),
                    key=lambda name: [(0, int(part), "") if part.isdigit() else (1, 0, part)
                                      for part in re.split(r"[.-]", name)])[-1]
    kernel_folder = os.path.join(modules, kernel)
    return BootFiles(sysroot, kernel, kernel_folder, _initramfs(folder, pi_package, sysroot, kernel_folder, bookworm))


@pytest.fixture(scope="module", params=list(MODELS))
def raspberry_pi(request, tmp_path_factory, boot_files):
    """QEMU's raspi3b (bookworm's QEMU 7.2), then its raspi4b (QEMU 10), each booted once with Debian's arm64
    kernel and guests/raspi-init.sh as /init, run until the guest says "PI: done" (or 10 minutes); QEMU is
    stopped whatever happens."""
    model = MODELS[request.param]
    folder = str(tmp_path_factory.mktemp(model.machine))
    qemu, environment = model.qemu()
    print(f"booting {boot_files.kernel} on an emulated {model.name} ({os.path.basename(qemu[0])} -M {model.machine}, "
          "TCG)", flush=True)
    started = time.monotonic()
    process = Process(folder, "console", [
        *qemu, "-M", model.machine, "-m", model.memory, "-nographic", "-no-reboot",
        "-kernel", os.path.join(boot_files.kernel_folder, "vmlinuz"), "-dtb", boot_files.dtb(model, folder),
        "-initrd", boot_files.initrd, "-append", f"{model.console}console=ttyAMA0 rdinit=/init quiet panic=-1"],
        env=environment)
    try:
        # Linux cannot power these machines off (nor reboot them after a panic): QEMU is stopped when the guest
        # says it is done, or panicked.
        while (process.alive() and not any(end in process.output() for end in ("PI: done", "Kernel panic"))
               and time.monotonic() - started < 600):
            time.sleep(2)
    finally:
        process.stop(timeout=5)
    console = process.output().replace("\r", "")
    pi = RaspberryPi(model, boot_files.kernel, console, time.monotonic() - started)
    pi.show()
    return pi


def test_debian_kernel_boots_on_the_emulated_raspberry_pi(raspberry_pi, check, figure):
    pi, model = raspberry_pi, raspberry_pi.model
    figure(f"the emulated {model.short} ({model.machine}) booted and ran in {pi.seconds:.0f} s")
    check(f"Debian's arm64 kernel boots on the emulated {model.name}",
          pi.said(rf"kernel {re.escape(pi.kernel)} on {model.name}"), "" if pi.lines else pi.console[-1500:])
    pins = pi.said(r"pins report (\S*): (.*)")
    check(f"the driver's pin report in debugfs (…-{model.label}/pins) has BCM 5",
          pins and pins[1].endswith(f"-{model.label}/pins") and pins[2].startswith("pin 5 (gpio5)"),
          pins[0] if pins else "no pins report line")
    chip = pi.chip
    check(f"the Pi's GPIO controller is there: {chip or 'no chip'} [{model.label}], {model.lines} lines (a wrong "
          "chip's error lists it)", chip, (pi.said(r"chips (.*)") or ["", "no chips line"])[1])
    check(f"receiver.chip: auto picks the Pi's controller ({chip or 'none'}) by its label; lines 5, 6, 13 through "
          "libgpiod v2",
          pi.said(rf"receiver GPIO: lines bass 5, mid 6, treble 13 on {re.escape(chip or 'none')}, .*libgpiod API v2"))


@pytest.mark.timing
def test_raw_frames_light_bcm_5_6_13_read_back_from_the_driver(raspberry_pi, check):
    pi = raspberry_pi
    pi.show()
    check("lines off when the receiver starts", pi.said(r"lines at start 0 0 0"))
    check("frames [255, 0, 255] light BCM 5 and 13, not 6 (read back from the driver)",
          pi.said(r"bass and treble full, samples of 40 on 40 0 40"))
    check("lines off when the sender disconnects (within 0.6 s, before receiver.timeout)",
          pi.said(r"lines 0.6 s after the sender closed 0 0 0"))
    check("frames [0, 255, 0] light BCM 6 only", pi.said(r"mid full, samples of 40 on 0 40 0"))


@pytest.mark.timing
def test_pwm_duty_of_a_line_follows_its_level_in_kernel_timestamps(raspberry_pi, check, figure):
    pi = raspberry_pi
    pi.show()
    pwm = pi.said(r"pwm duty ([0-9.]+) rises ([0-9]+) over ([0-9.]+)")
    duty, rises, span = (float(pwm[1]), int(pwm[2]), float(pwm[3])) if pwm else (0.0, 0, 1.0)
    expected = (160 / 255) ** 2.2
    figure(f"PWM of BCM 6 on the {pi.model.short} from the kernel's gpio_value timestamps: duty "
           f"{duty if pwm else '?'} (level 160 with gamma 2.2 gives {expected:.3f}), {rises / span:.0f} Hz (set 200)")
    check("PWM duty of a level-160 line matches its level within 0.08 (kernel timestamps)",
          expected - 0.08 < duty < expected + 0.08, f"duty {duty:.3f}, expected {expected:.3f}")


def _cost(pi, label):
    """(% of a core, resident MiB, private MiB, dirty MiB) of a `cost` line of /init, or None."""
    found = pi.said(rf"{label} cpu ticks ([0-9]+) over ([0-9.]+) ([0-9.]+) Rss: ([0-9]+) kB Private_Clean: ([0-9]+) "
                    r"kB Private_Dirty: ([0-9]+)")
    if not found:
        return None
    ticks, t0, t1, rss, clean, dirty = (float(value) for value in found.groups())
    return ticks / (t1 - t0), rss / 1024, (clean + dirty) / 1024, dirty / 1024


def test_packaged_receiver_plays_the_demo_and_serves_its_page_on_the_pi(raspberry_pi, check, figure):
    pi = raspberry_pi
    pi.show()
    alone, with_page = _cost(pi, "receiver"), _cost(pi, "receiver with a page")
    if alone:
        figure(f"receiver driving 3 lines from the demo at 100 frames/s on the emulated {pi.model.short}: "
               "{:.1f} % of a core (TCG), resident {:.1f} MiB, private {:.1f} MiB (dirty {:.1f})".format(*alone))
    if with_page:
        figure(f"the same on the {pi.model.short} with one page open on /live: "
               "{:.1f} % of a core (TCG), resident {:.1f} MiB, private {:.1f} MiB (dirty {:.1f})".format(*with_page))
    page = pi.said(r"page (\S*)")
    check("the packaged receiver serves its page: the log gives https://…:8443/#key=… (certificate made with "
          "openssl)", pi.said(r"page https://[^ ]+:8443/#key=[A-Za-z0-9_-]{22}$"), page[1] if page else "no page line")
    if page:
        figure(f"the page's link in the {pi.model.short}'s log: {page[1]}")
    check("the page's WebSocket on the Pi (openssl s_client): upgraded, lamp and status messages arrive",
          pi.said(r"page socket HTTP/1.1 101 .* lamp messages [1-9][0-9]* status messages [1-9]"))
    check("the demo from the packaged sender lights the lamps",
          pi.said(r"lines while the demo plays, samples of 40 on [0-9]+ [0-9]+ [0-9]+")
          and not pi.said(r"lines while the demo plays, samples of 40 on 0 0 0"))
    check("lines off after SIGTERM, and the receiver ends",
          pi.said(r"lines after SIGTERM 0 0 0") and pi.said(r"receiver ended after SIGTERM"))


def test_test_leds_lights_each_line_in_turn(raspberry_pi, check):
    pi = raspberry_pi
    pi.show()
    # The sampler reads the three lines one after another, so a change can show half-done ("0 1 1" between mid
    # and treble): the states must come in this order, with such passing states allowed between them.
    check("test-leds lights BCM 5, 6, 13 in turn, then all",
          pi.said(r"test-leds states .*\|1 0 0\|([01 ]+\|)*0 1 0\|([01 ]+\|)*0 0 1\|([01 ]+\|)*1 1 1\|"))
    check("test-leds names each line with its header pin",
          pi.said(r"test-leds said bass: GPIO 5, header pin 29 on [^/]*/mid: GPIO 6, header pin 31 on [^/]*/"
                  r"treble: GPIO 13, header pin 33 on "))
    check("test-leds ends dark", pi.said(r"test-leds after 0 0 0"))


def test_gpio_sim_beside_the_pis_controller(raspberry_pi, check):
    pi = raspberry_pi
    pi.show()
    if pi.said(r"no gpio-sim module"):
        pytest.skip("this kernel has no gpio-sim module")
    check("with gpio-sim beside it, auto still picks the Pi's controller",
          pi.said(rf"gpio-sim beside it, auto GPIO: .* on {re.escape(pi.chip or 'none')}, "))
    check("gpio-sim chip by its label: mid lit", pi.said(r"gpio-sim lines while mid is full 0 1 0"))
    check("gpio-sim: lines off after SIGTERM", pi.said(r"gpio-sim lines after SIGTERM 0 0 0"))

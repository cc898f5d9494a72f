"""Debian's kernel in a throw-away QEMU guest (TCG) with real kernel devices, for test_kernel_devices.py.

The guest boots Debian's kernel (the newest /boot/vmlinuz-*) with a small initramfs: busybox for the
shell and tools, the kernel's `snd-aloop` (a loopback sound card) and `configfs` modules in dependency
order, `gpio-sim` (a simulated GPIO chip whose lines can be read from the kernel side,
sim_gpioN/value), the built lightorgan with every shared library it loads, aplay/arecord, the
`gpio-trace` sampler (guests/gpio-trace.c, static) and a 1 kHz tone. Its /init is guests/vm-init.sh:
it runs lightorgan against those devices and says what it sees in "VM: ..." lines on the serial
console; `vm_lines` parses them, `Trace` and `Stalls` read the sampler's and the watchers' lines.

Facts measured with the old scripts/test-vm, kept here:
- Debian's kernel does not ship gpio-sim: it is built out of tree from 3 files of Debian's kernel
  source (gpio-sim.c, gpiolib.h, kernel/irq/irq_sim.c; irq_to_desc is not exported to modules, and
  generic_handle_irq does the same there), once per kernel version, and cached.
- Under TCG emulation CPU time is inflated: the stdout receiver's cost in the guest gives the factor
  against the native figures of bench-link.
- A guest starved by a busy host starts processes late and can stall for seconds: the ALSA frame rate
  is judged from the receiver's own CLOCK_MONOTONIC stamps of its first and last frame (a late sender
  shortens the span, not the rate), from at least 50 frames. Under a busy host the guest once ran the
  receiver's 200 Hz PWM at 71 Hz; line samples then miss whole periods, and a sender more than 0.5 s
  behind skips audio (FrameProducer.maximumCatchUp): the tone's phase jumps, a click lights bass and
  treble for a moment and the level dips. gpio-trace therefore stamps every line change and every
  stall with the guest's clock (which follows the host's under TCG), and a watcher pinned to each vCPU
  notes when that vCPU did not run: the PWM is judged only over periods where nothing stalled, the dark
  lines and onoff's full-on line only outside a settling time after a long stall.
"""
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

from support import boot_counts, caches

HERE = os.path.dirname(os.path.abspath(__file__))
GUESTS = os.path.join(os.path.dirname(HERE), "guests")
TOOLS = ["sh", "mount", "insmod", "sleep", "cat", "kill", "ip", "awk", "wc", "head", "tail", "grep", "sed", "echo",
         "poweroff", "ls", "mkdir", "sync", "seq", "nc", "printf", "renice", "mkfifo", "cut", "tr", "chroot"]
LINES = {"bass": 5, "mid": 6, "treble": 13}


def kernel():
    """(vmlinuz path, version) of the newest installed kernel."""
    def version_key(path):
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]
    images = sorted(glob.glob("/boot/vmlinuz-*"), key=version_key)
    if not images:
        raise RuntimeError("no /boot/vmlinuz-*: install linux-image-amd64")
    return images[-1], images[-1][len("/boot/vmlinuz-"):]


def _run(command, **options):
    return subprocess.run(command, check=True, capture_output=True, **options)


def gpio_sim_module(version=None):
    """The path of gpio-sim.ko for kernel `version`: cached, else built (downloads linux-source: call it
    before the tests enter a namespace without a network)."""
    version = version or kernel()[1]
    folder = caches.folder("gpio-sim")
    module = os.path.join(folder, f"gpio-sim-{version}.ko")
    with caches.locked("gpio-sim"):
        if os.path.exists(module):
            return module
        build = tempfile.mkdtemp(prefix="gpio-sim-")
        try:
            series = version.split(".0-")[0]  # 6.1.0-56-amd64 → 6.1
            if subprocess.run(["apt-get", "download", f"linux-source-{series}"], cwd=build,
                              capture_output=True).returncode != 0:
                _run(["apt-get", "download", "linux-source-6.1"], cwd=build)
            deb = glob.glob(os.path.join(build, "linux-source-*.deb"))[0]
            wanted = ["*/drivers/gpio/gpio-sim.c", "*/drivers/gpio/gpiolib.h", "*/kernel/irq/irq_sim.c"]
            _run(["sh", "-c", "dpkg-deb --fsys-tarfile \"$1\" | tar -x --wildcards -O './usr/src/linux-source-*.tar.xz'"
                  " | xz -dc | tar -x -C \"$2\" --wildcards \"$3\" \"$4\" \"$5\"", "sh", deb, build, *wanted])
            os.remove(deb)
            source = glob.glob(os.path.join(build, "linux-source-*"))[0]
            sources = os.path.join(build, "module")
            os.makedirs(sources)
            shutil.copy(os.path.join(source, "drivers/gpio/gpio-sim.c"), os.path.join(sources, "gpio-sim-main.c"))
            shutil.copy(os.path.join(source, "drivers/gpio/gpiolib.h"), sources)
            with open(os.path.join(source, "kernel/irq/irq_sim.c")) as file:
                irq_sim = file.read()
            # irq_to_desc is not exported to modules; generic_handle_irq does the same here.
            with open(os.path.join(sources, "irq_sim.c"), "w") as file:
                file.write(irq_sim.replace("handle_simple_irq(irq_to_desc(irqnum));", "generic_handle_irq(irqnum);"))
            with open(os.path.join(sources, "Kbuild"), "w") as file:
                file.write("obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n")
            _run(["make", "-s", "-C", f"/lib/modules/{version}/build", f"M={sources}", "modules"])
            shutil.copy(os.path.join(sources, "gpio-sim.ko"), module + ".part")
            os.rename(module + ".part", module)
        finally:
            shutil.rmtree(build, ignore_errors=True)
    return module


def _modules(version, name):
    """The .ko paths `modprobe` would load for `name`, in dependency order."""
    shown = _run(["modprobe", "-S", version, "--show-depends", name], text=True).stdout
    return [line.split()[1] for line in shown.splitlines() if line.startswith("insmod ")]


def _copy_with_libraries(program, root, destination):
    """Copies `program` to root/destination and every shared library it loads to the same path in root."""
    shutil.copy(program, os.path.join(root, destination))
    linked = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    for library in re.findall(r"(/[^ ]+)", linked):
        path = root + library
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            shutil.copy(os.path.realpath(library), path)


def gpio_trace(folder):
    """guests/gpio-trace.c built static into `folder`; its path."""
    binary = os.path.join(folder, "gpio-trace")
    _run(["gcc", "-O2", "-static", "-Wall", "-o", binary, os.path.join(GUESTS, "gpio-trace.c")])
    return binary


def tone(path, seconds=6):
    """A 1 kHz tone, 48 kHz stereo s16le (6 s: 6000 whole periods, so copies of it join without a click)."""
    import numpy
    samples = (12000 * numpy.sin(2 * numpy.pi * 1000 * numpy.arange(48000 * seconds) / 48000)).astype("<i2")
    with open(path, "wb") as file:
        file.write(numpy.repeat(samples, 2).tobytes())


def initramfs(folder, lightorgan, version, bluetooth=False, alone=None):
    """The guest's initramfs (gzip'd cpio) in `folder`; its path. With `bluetooth`, the Bluetooth speaker and phone
    too (support/bluetooth_guest.py), whose part vm-init.sh runs last. `alone` ("bluetooth"): an /init that runs that
    part alone, for working on it."""
    root = os.path.join(folder, "root")
    for part in ["bin", "sbin", "dev", "proc", "sys", "tmp", "etc", "lib/modules", "usr/share", "lib64"]:
        os.makedirs(os.path.join(root, part), exist_ok=True)
    shutil.copy("/bin/busybox", os.path.join(root, "bin/busybox"))
    for tool in TOOLS:
        os.symlink("busybox", os.path.join(root, "bin", tool))
    modules = _modules(version, "snd-aloop") + _modules(version, "configfs")
    if bluetooth:
        from support import bluetooth_guest
        bluetooth_guest.add_to(root, lightorgan, version, modules)
    for module in modules:
        shutil.copy(module, os.path.join(root, "lib/modules"))
    shutil.copy(gpio_sim_module(version), os.path.join(root, "lib/modules/gpio-sim.ko"))
    with open(os.path.join(root, "lib/modules/order"), "w") as order:
        order.write("".join(os.path.basename(module) + "\n" for module in modules) + "gpio-sim.ko\n")
    _copy_with_libraries(lightorgan, root, "bin/lightorgan")
    _copy_with_libraries(shutil.which("aplay"), root, "bin/aplay")
    os.symlink("aplay", os.path.join(root, "bin/arecord"))
    shutil.copy(gpio_trace(folder), os.path.join(root, "bin/gpio-trace"))
    shutil.copytree("/usr/share/alsa", os.path.join(root, "usr/share/alsa"))
    if not os.path.exists(os.path.join(root, "lib64/ld-linux-x86-64.so.2")):
        shutil.copy("/lib64/ld-linux-x86-64.so.2", os.path.join(root, "lib64"))
    tone(os.path.join(root, "tmp/tone.raw"))
    if alone == "bluetooth":
        with open(os.path.join(root, "init"), "w") as init:
            init.write("#!/bin/sh\nexec /bin/sh /bin/bluetooth.sh alone\n")
    else:
        shutil.copy(os.path.join(GUESTS, "vm-init.sh"), os.path.join(root, "init"))
    os.chmod(os.path.join(root, "init"), 0o755)
    initrd = os.path.join(folder, "initrd.gz")
    _run(["sh", "-c", "cd \"$1\" && find . | cpio -o -H newc --quiet | gzip -1 >\"$2\"", "sh", root, initrd])
    shutil.rmtree(root)
    return initrd


# The guest stands for a machine of its own: its vCPUs are the cores a Pi has to itself, and the load a busy Pi sees
# is made inside it (the hogs beside the PWM). Under TCG the guest's clock is the host's, so a host whose cores are
# both taken (stress-ng --cpu 2 beside the suite) took half of every vCPU's time: measured, 1,100 to 1,400 vCPU
# stalls over 3 ms in each real-time trace, 4 of 384 PWM periods left undisturbed to judge. The emulator gets the
# priority RTKit gives a desktop's sound server, nice -11. With the kernel's autogroups (on in Debian) a nice value
# weighs only within its session, so QEMU gets a session of its own and that group's nice: it then outweighs a hog
# of another session about twelve to one. Without the right to raise it (no CAP_SYS_NICE) QEMU runs as it is.
EMULATOR_NICE = -11


def _nice_emulator():
    """In QEMU's process before it runs (its threads inherit it): EMULATOR_NICE, where allowed."""
    try:
        os.nice(EMULATOR_NICE)
    except OSError:
        pass


def _raise_group_priority(pid):
    """Gives the autogroup of `pid` (its own session's) the nice EMULATOR_NICE where autogroups are on and it is
    allowed: there a process's nice weighs only against its own session's."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(EMULATOR_NICE))
    except OSError:
        pass


class Guest:
    """What a booted guest said: its console, how QEMU ended, its "VM:" lines (vm_lines) and how long it ran."""

    def __init__(self, api, console, ending, lines, seconds):
        self.api, self.console, self.ending, self.lines, self.seconds = api, console, ending, lines, seconds

    def get(self, key):
        return self.lines.get(key, "")

    def said(self, key, pattern):
        """Whether the line `key` matches the regular expression `pattern` (whole line)."""
        return key in self.lines and re.fullmatch(pattern, self.lines[key]) is not None

    def tail(self):
        return " | ".join(self.console.strip().splitlines()[-8:])


def booted(lightorgan, folder, bluetooth=False):
    """The guest (vm-init.sh) booted once in `folder`, with the Bluetooth part when `bluetooth`; its Guest. Prints
    how long it ran and its "VM:" lines (but the long ones)."""
    api = 2  # the libgpiod API linked in (scripts/lib/prepare.sh's ensure_libgpiod), as the guest's log line says
    image, version = kernel()
    initrd = initramfs(folder, lightorgan, version, bluetooth=bluetooth)
    started = time.monotonic()
    console, ending = boot(image, initrd, os.path.join(folder, "console.txt"), time_limit=480 if bluetooth else 300)
    seconds = time.monotonic() - started
    print(f"vm (libgpiod API {api}{', Bluetooth' if bluetooth else ''}): booted and ran in {seconds:.0f} s "
          f"({ending}); console in {folder}/console.txt")
    for line in console.splitlines():
        if line.startswith("VM: ") and not line.startswith(("VM: trace", "VM: stalls", "VM: bt frames")):
            print(line)
    return Guest(api, console, ending, vm_lines(console), seconds)


def boot(image, initrd, console, time_limit=300):
    """Boots the guest (TCG, 2 vCPUs, 1 GiB; at EMULATOR_NICE, in a session of its own) until it powers off, its
    serial console into the file `console`; killed after `time_limit` s. Returns the console's text (carriage
    returns removed) and how QEMU ended ("QEMU exited with status 0 after 63 s", "… killed by signal 9 …", "…
    stopped at the time limit …"): a guest whose /init did not reach its end says so only by that. A guest still
    running at the time limit is asked first, by the kernel's magic SysRq keys, for what each vCPU runs and which
    tasks are blocked (sysrq_dump), into the console."""
    monitor_folder = tempfile.mkdtemp(prefix="lightorgan-qemu-")  # a short path: a socket's is at most 107 bytes
    monitor = os.path.join(monitor_folder, "monitor")
    command = ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", "1024", "-smp", "2", "-nographic",
               "-no-reboot", "-kernel", image, "-initrd", initrd,
               "-append", "console=ttyS0 quiet panic=-1 sysrq_always_enabled",
               # A triple fault or reset of the guest's CPUs (QEMU then just exits, -no-reboot) in a log of its own.
               "-d", "cpu_reset,guest_errors", "-D", f"{console}.qemu-log",
               "-monitor", f"unix:{monitor},server,nowait"]
    boot_counts.add("x86_64")
    started, ending = time.monotonic(), None
    with open(console, "wb") as out:
        qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_nice_emulator)
        _raise_group_priority(qemu.pid)
        try:
            qemu.wait(time_limit)
        except subprocess.TimeoutExpired:
            ending = f"QEMU stopped at the time limit, {time_limit} s (the vCPUs' backtraces in its console)"
            sysrq_dump(monitor)
        finally:  # past the time limit, or the test run interrupted: no guest left behind
            if qemu.poll() is None:
                qemu.kill()
                qemu.wait()
            shutil.rmtree(monitor_folder, ignore_errors=True)
    seconds = time.monotonic() - started
    if ending is None:
        how = f"killed by signal {-qemu.returncode}" if qemu.returncode < 0 else f"exited with status {qemu.returncode}"
        ending = f"QEMU {how} after {seconds:.0f} s{_resets(f'{console}.qemu-log')}"
    with open(console, "rb") as file:
        return file.read().decode(errors="replace").replace("\r", ""), ending


def sysrq_dump(monitor):
    """Presses, on the guest's keyboard through QEMU's monitor socket `monitor`, the magic SysRq keys 9 (every
    kernel message to the console: `quiet` shows only errors), l (a backtrace of each vCPU) and w (the blocked
    tasks), a few seconds apart so that the console takes each. Nothing when the monitor does not answer."""
    try:
        with socket.socket(socket.AF_UNIX) as connection:
            connection.connect(monitor)
            for key in ["9", "l", "w"]:
                connection.sendall(f"sendkey alt-sysrq-{key}\n".encode())
                time.sleep(4)
    except OSError:
        pass


def _resets(log):
    """", its log: N CPU resets" (a guest that runs to its poweroff: 6, its vCPUs' start-ups), and "a triple
    fault" when there was one, from QEMU's -d cpu_reset log; "" without a log."""
    try:
        with open(log, errors="replace") as file:
            text = file.read()
    except OSError:
        return ""
    faults = ", a triple fault" if "triple fault" in text.lower() else ""
    return f", its log: {text.count('CPU Reset')} CPU resets{faults}"


# What vm-init.sh says, by the words its "VM: ..." lines begin with (longest first wins).
KEYS = ["cards:", "loaded trace base", "loaded late timers", "send log:", "send overruns", "frames", "frame list", "last", "busy status", "stdout receiver cpu ticks",
        "own sound log", "own sound frames", "own sound last",
        "gpio chip", "gpio lines at start", "gpio receiver log:", "gpio receiver cpu ticks",
        "gpio lines after a frozen sender", "gpio lines after the sender stopped", "gpio idle receiver cpu ticks",
        "gpio missing chip", "gpio busy line", "gpio lines while lit, on of 50 readings", "gpio lines after SIGTERM", "gpio receiver",
        "gpio lines after onoff", "onoff hysteresis", "test-leds states", "test-leds after", "done"]


def vm_lines(console):
    """{key: rest of the line} of the console's "VM: ..." lines: key one of KEYS, or "trace NAME" /
    "stalls NAME" for gpio-trace's lines; any other line (an insmod failure) under its whole text."""
    found = {}
    for line in console.splitlines():
        if "VM: " not in line:
            continue
        text = line[line.index("VM: ") + 4:]  # the first line follows the console's reset sequences
        words = text.split(" ", 2)
        if words[0] in ("trace", "stalls") and len(words) > 1:
            found[f"{words[0]} {words[1]}"] = words[2] if len(words) > 2 else ""
            continue
        key = max((key for key in KEYS if text == key or text.startswith(key + " ")), key=len, default=None)
        if key is None:
            found[text] = ""
        else:
            found[key] = text[len(key):].strip()
    return found


# -- gpio-trace's lines --------------------------------------------------------------------------

def _events(tokens, start):
    changes, gaps = [], []
    for token in tokens:
        if "!" in token:
            at, length = token.split("!")
            gaps.append((start + int(at), start + int(at) + int(length)))
        elif "=" in token:
            at, bits = token.split("=")
            changes.append((start + int(at), tuple(int(bit) for bit in bits)))
    return changes, gaps


class Trace:
    """The lines (bass, mid, treble) as gpio-trace saw them: `changes` [(µs, (b, m, t))] from `start` to
    `end` (the guest's CLOCK_MONOTONIC, µs), `gaps` [(from, to)] where the sampler took no sample for
    over 1 ms (not scheduled: the guest's own load, or the host's)."""

    def __init__(self, text):
        fields = text.split()
        self.start, self.end, self.samples = int(fields[0]), int(fields[1]), int(fields[2])
        self.changes, self.gaps = _events(fields[3:], self.start)

    def state_at(self, time):
        state = self.changes[0][1]
        for at, bits in self.changes:
            if at > time:
                break
            state = bits
        return state

    def stretches(self):
        """[(from, to, (b, m, t))]: the lines' states one after the other, start to end."""
        bounds = self.changes + [(self.end, None)]
        return [(at, bounds[i + 1][0], bits) for i, (at, bits) in enumerate(self.changes) if bounds[i + 1][0] > at]


class Stalls:
    """A watcher's stalls: [(from, to)] where its vCPU did not wake it for over 3 ms."""

    def __init__(self, text):
        fields = text.split()
        self.start, self.end = int(fields[0]), int(fields[1])
        self.stalls = _events(fields[2:], self.start)[1]


def overlaps(low, high, intervals):
    return any(a < high and b > low for a, b in intervals)


def clipped_length(low, high, intervals):
    """How much of [low, high] the union of `intervals` covers."""
    covered, reach = 0, low
    for a, b in sorted(intervals):
        a, b = max(a, reach), min(b, high)
        if b > a:
            covered += b - a
            reach = b
    return covered


def disturbed(trace, watchers, longer_than=0, settle=0):
    """[(from, to)]: the sampler's gaps and the watchers' stalls longer than `longer_than` µs, each
    followed by `settle` µs."""
    intervals = list(trace.gaps)
    for watcher in watchers:
        intervals += watcher.stalls
    return sorted((a, b + settle) for a, b in intervals if b - a > longer_than)


def pwm_periods(trace, line, excluded):
    """[(from, to, on µs)]: the PWM periods of `line` (rising edge to rising edge) that overlap none of
    `excluded`."""
    index = list(LINES).index(line)
    rises = [at for i, (at, bits) in enumerate(trace.changes)
             if i > 0 and bits[index] == 1 and trace.changes[i - 1][1][index] == 0]
    periods = []
    for low, high in zip(rises, rises[1:]):
        if overlaps(low, high, excluded):
            continue
        on = sum(min(b, high) - max(a, low) for a, b, bits in trace.stretches()
                 if bits[index] == 1 and a < high and b > low)
        periods.append((low, high, on))
    return periods


def on_time(trace, excluded):
    """({line: µs on}, µs judged) over the trace outside `excluded`."""
    on = dict.fromkeys(LINES, 0)
    judged = 0
    for a, b, bits in trace.stretches():
        length = (b - a) - clipped_length(a, b, excluded)
        judged += length
        for index, line in enumerate(LINES):
            if bits[index]:
                on[line] += length
    return on, judged

"""The phone of the Bluetooth guest (guests/bluetooth.sh): BlueZ's D-Bus API on the phone's controller, as a phone's
own stack would ask it. Runs in the guest's chroot with trixie's python3 and python3-dbus (no main loop: every call
blocks). Each command prints one line, "<seconds since boot> <what happened>", and exits 0 when it did what it
was asked, else 1.

  address HCI                 the controller's address
  alias HCI NAME              the name the phone shows others
  discover HCI TARGET SECONDS looks for TARGET (an inquiry) for at most SECONDS
  pair HCI TARGET [SECONDS]   pairs with TARGET (found by discover), no agent: as a phone with no input or output
  paired HCI TARGET           whether this controller's BlueZ has TARGET paired and trusted
  connect HCI TARGET          connects its profiles (A2DP)
  disconnect HCI TARGET       disconnects
  off HCI                     switches the phone's Bluetooth off (it leaves, as out of range)
"""
import sys
import time

import dbus


def uptime():
    with open("/proc/uptime") as file:
        return file.read().split()[0]


def say(words, status=0):
    print(f"{uptime()} {words}", flush=True)
    sys.exit(status)


def main(command, hci, target=None, seconds="60"):
    bus = dbus.SystemBus()
    manager = dbus.Interface(bus.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
    adapter = f"/org/bluez/{hci}"
    if command == "address":
        say(manager.GetManagedObjects()[adapter]["org.bluez.Adapter1"]["Address"])
    properties = dbus.Interface(bus.get_object("org.bluez", adapter), "org.freedesktop.DBus.Properties")
    if command == "off":  # the phone's Bluetooth switched off: every link drops at once, as out of range
        started = time.monotonic()
        properties.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(False))
        say(f"off in {time.monotonic() - started:.2f} s")
    properties.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
    if command == "alias":  # the name the phone shows others (TARGET: the name)
        properties.Set("org.bluez.Adapter1", "Alias", dbus.String(target))
        say(f"named {target!r}")
    device = f"{adapter}/dev_" + target.replace(":", "_")
    if command == "discover":
        started = time.monotonic()
        adapter_api = dbus.Interface(bus.get_object("org.bluez", adapter), "org.bluez.Adapter1")
        adapter_api.StartDiscovery()
        try:
            while time.monotonic() - started < float(seconds):
                found = manager.GetManagedObjects().get(device, {}).get("org.bluez.Device1")
                if found is not None and "RSSI" in found:  # an inquiry answered now, not a device known before
                    say(f"found {target} ({found.get('Alias', '?')}, class 0x{int(found.get('Class', 0)):06x}) in "
                        f"{time.monotonic() - started:.2f} s")
                time.sleep(0.2)
        finally:
            try:
                adapter_api.StopDiscovery()
            except dbus.DBusException:
                pass
        say(f"not found {target} in {seconds} s", 1)
    api = dbus.Interface(bus.get_object("org.bluez", device), "org.bluez.Device1")
    started = time.monotonic()
    try:
        if command == "pair":
            api.Pair(timeout=float(seconds))
        elif command == "paired":  # as this controller's BlueZ knows TARGET
            device_properties = dbus.Interface(bus.get_object("org.bluez", device), "org.freedesktop.DBus.Properties")
            say(f"paired={bool(device_properties.Get('org.bluez.Device1', 'Paired'))} "
                f"trusted={bool(device_properties.Get('org.bluez.Device1', 'Trusted'))}")
        elif command == "connect":
            api.Connect(timeout=60)
        elif command == "disconnect":
            api.Disconnect(timeout=30)
        else:
            say(f"unknown command {command}", 2)
    except dbus.DBusException as error:
        say(f"failed {error.get_dbus_name()} after {time.monotonic() - started:.2f} s: {error.get_dbus_message()}", 1)
    say(f"done in {time.monotonic() - started:.2f} s")


if __name__ == "__main__":
    main(*sys.argv[1:])

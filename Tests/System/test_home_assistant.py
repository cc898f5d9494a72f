"""The receiver in Home Assistant over MQTT, against a real Mosquitto broker (Debian's `mosquitto`, started by each
test on a port of its own, on the test's side of the page host's veth): the retained discovery configs hold the keys
Home Assistant's schema requires for each platform; availability follows the receiver through its last will (kill -9)
and restarts; Home Assistant's `online` brings the configs again; commands change the receiver exactly as its page
does (and the page shows them; a change on the page shows on the broker); bad payloads change nothing; a broker that
is missing, refuses the credentials or restarts costs one line and never a lamp; over TLS the receiver trusts
mqtt.ca_file (and without it names that setting); `auto` finds the broker that DNS-SD announces (a real avahi-daemon)."""
import json
import os
import sys
import time

import pytest

from support import home_assistant
from support.browser import counter_sender, page_status
from support.mqtt import Broker
from support.processes import wait_for

pytestmark = pytest.mark.mqtt

PREFIX = "homeassistant"
BASE = "lightorgan/living-room"
# The keys Home Assistant 2024.3's MQTT discovery schema requires of each platform (and `schema: json` for the
# light's JSON schema), beside what every entity here carries.
REQUIRED = {"light": {"command_topic", "schema"}, "select": {"command_topic", "options"},
            "sensor": {"state_topic"}, "button": {"command_topic"}}
EVERY_ENTITY = {"unique_id", "device", "origin", "availability_topic"}
EFFECTS = ["segments", "blend", "scroll", "energy", "flash", "bpm_strobe", "bar_step", "beat_pulse"]
WRITER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support", "paced_writer.py")


@pytest.fixture
def broker(page_host, tmp_path):
    folder = tmp_path / "broker"
    folder.mkdir()
    started = Broker(str(folder), host=page_host.peer.test_address)
    yield started
    started.stop()


def receiver(page_host, broker, name="receiver", *extra, state=None, env=None):
    """The receiver "Living room" linked to `broker` (mqtt.broker by its variable); (process, page key)."""
    return page_host.receiver(name, "--name", "Living room", *extra, state=state,
                              env={"LIGHTORGAN_MQTT_BROKER": broker.url, **(env or {})})


def configs(broker):
    return {topic: json.loads(payload) for topic, payload in broker.retained(f"{PREFIX}/#").items()
            if topic.endswith("/config")}


def online(broker, value="online", timeout=15):
    return wait_for(lambda: broker.retained(f"{BASE}/availability").get(f"{BASE}/availability") == value, timeout)


def levels(process, since):
    """The levels (bass, mid, treble) the receiver showed after `since` (its CLOCK_MONOTONIC seconds)."""
    return [tuple(map(int, fields[1:4])) for fields in process.lines() if len(fields) == 4 and float(fields[0]) > since]


def row(status, key):
    return next((setting for setting in status["settings"] if setting["key"] == key), {})


def page_shows(page_host, key, condition, timeout=5):
    """Whether `condition(status)` holds on the page within `timeout` s: a fresh /live every half second (faster
    would be refused: the page admits 3 connections a second from one address)."""
    deadline = time.monotonic() + timeout
    while True:
        if condition(page_status(page_host.address, key)):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)


def test_home_assistant_finds_the_receiver_by_retained_configs_and_its_availability_follows_it(
        page_host, broker, spawn, check, tmp_path):
    process, _ = receiver(page_host, broker)
    check("the receiver says online, retained, by its last will's topic", online(broker), process.log()[-1500:])
    found = {}
    wait_for(lambda: len(found.update(configs(broker)) or found) >= 10, 5)
    by_component = {}
    for topic, config in found.items():
        by_component.setdefault(topic.split("/")[1], []).append(config)
    check("ten entities: a light, two selects, six sensors, a button",
          {name: len(items) for name, items in by_component.items()} == {"light": 1, "select": 2, "sensor": 6,
                                                                          "button": 1}, sorted(found))
    missing = [f"{topic}: {sorted((REQUIRED[topic.split('/')[1]] | EVERY_ENTITY) - set(config))}"
               for topic, config in found.items() if (REQUIRED[topic.split("/")[1]] | EVERY_ENTITY) - set(config)]
    check("each config holds the keys Home Assistant requires of its platform, and a unique_id, device, origin and "
          "availability topic", not missing, "; ".join(missing))
    devices = {json.dumps(config["device"], sort_keys=True) for config in found.values()}
    device = found and next(iter(found.values()))["device"]
    check("one device for every entity", len(devices) == 1, devices)
    check("the device has the receiver's name", device.get("name") == "Living room", device.get("name"))
    check("the device has a stable id (lightorgan_…)",
          device.get("identifiers", [""])[0].startswith("lightorgan_"), device.get("identifiers"))
    check("the device has a version", device.get("sw_version"), device)
    light = next(iter(by_component.get("light", [{}])))
    check("the light lists the eight effects, the three that follow the beat last",
          light.get("effect_list") == EFFECTS, light.get("effect_list"))
    tempo = next((config for topic, config in found.items() if topic.endswith("/bpm/config")), {})
    check("a Tempo sensor in BPM, read from the status topic",
          (tempo.get("unit_of_measurement"), tempo.get("state_topic"), tempo.get("value_template"))
          == ("BPM", f"{BASE}/status", "{{ value_json.bpm }}"), tempo)
    check("the light's brightness is in percent", light.get("brightness_scale") == 100, light)
    state = json.loads(broker.retained(f"{BASE}/light/state").get(f"{BASE}/light/state", "{}"))
    check("the light's state is retained: on", state.get("state") == "ON", state)
    check("the light's state is retained: at the brightness limit", state.get("brightness") == 100, state)
    unique_ids = sorted(config["unique_id"] for config in found.values())

    process.kill()
    check("kill -9: the broker publishes the last will, offline", online(broker, "offline", timeout=10),
          broker.log()[-800:])
    again, _ = receiver(page_host, broker, "receiver-again", state=os.path.join(page_host.folder, "state-receiver"))
    check("restarted: online again", online(broker), again.log()[-1500:])
    check("the same unique_ids after the restart (the id is kept in the state directory)",
          sorted(config["unique_id"] for config in configs(broker).values()) == unique_ids)

    watcher = broker.messages(spawn, "configs", f"{PREFIX}/+/+/+/config")
    broker.publish(f"{PREFIX}/status", "online")
    check("Home Assistant's online on homeassistant/status brings every config again",
          watcher.wait(lambda messages: len({m.topic for m in messages}) >= 10, 5), len(watcher.all()))


def test_commands_change_the_receiver_as_its_page_does_and_changes_on_the_page_reach_the_broker(
        page_host, broker, spawn, check, figure):
    process, key = receiver(page_host, broker)
    assert online(broker), process.log()[-1500:]
    counter_sender(spawn, "sender", page_host)
    check("the lamps follow the sender", wait_for(lambda: any(sum(level) for level in levels(process, 0)), 10))
    watcher = broker.messages(spawn, "everything", f"{BASE}/#")
    time.sleep(5)
    rate = len([message for message in watcher.all() if not message.retained]) / 5
    figure(f"messages a second the receiver publishes while every frame changes the levels: {rate:.1f}")
    check("at most a few messages a second for all the entities together", rate <= 4, rate)

    def state(topic):
        return broker.retained(f"{BASE}/{topic}").get(f"{BASE}/{topic}", "")

    sent = time.clock_gettime(time.CLOCK_MONOTONIC)
    broker.publish(f"{BASE}/light/set", '{"state":"OFF"}')
    check("light off: the state says OFF", wait_for(lambda: json.loads(state("light/state") or "{}").get("state")
                                                    == "OFF", 5), state("light/state"))
    time.sleep(1.5)
    shown = levels(process, sent + 0.5)
    check("light off: more than 50 frames shown while the sender streams", len(shown) > 50, f"{len(shown)} frames")
    check("light off: every frame dark", not any(map(sum, shown)),
          f"{len(shown)} frames, {sum(1 for level in shown if sum(level))} lit")
    status = page_status(page_host.address, key)
    check("the page shows it: receiver.lights off", row(status, "receiver.lights").get("value") == "off",
          row(status, "receiver.lights"))
    check("the page shows it: receiver.lights set on the page's path",
          row(status, "receiver.lights").get("source") == "page", row(status, "receiver.lights"))
    check("the sender still drives the receiver", status.get("fps", 0) > 50, status.get("fps"))

    sent = time.clock_gettime(time.CLOCK_MONOTONIC)
    broker.publish(f"{BASE}/light/set", '{"state":"ON","brightness":40,"effect":"flash"}')
    check("light on at 40 % with the flash effect: the state says so", wait_for(
        lambda: json.loads(state("light/state") or "{}") == {"state": "ON", "brightness": 40, "effect": "flash",
                                                             "color_mode": "brightness"}, 5), state("light/state"))
    time.sleep(1.5)
    shown = [level for level in levels(process, sent + 0.5)]
    check("the lamps dance again", any(map(sum, shown)), f"{len(shown)} frames")
    check("none above 40 % of full", max(map(max, shown), default=0) <= 102,
          f"max {max(map(max, shown)) if shown else None}")

    broker.publish(f"{BASE}/palette/set", "red, amber, white")
    broker.publish(f"{BASE}/sound/set", "airplay")
    check("the selects' states follow", wait_for(lambda: state("palette/state") == "red, amber, white"
                                                 and state("sound/state") == "airplay", 5),
          f"{state('palette/state')!r} {state('sound/state')!r}")
    status = page_status(page_host.address, key)
    check("the page shows the brightness, effect, palette and sound Home Assistant chose", [
        row(status, name).get("value") for name in ("receiver.max_brightness", "receiver.strip.effect",
                                                    "receiver.strip.palette", "receiver.sound")]
        == ["40", "flash", "red, amber, white", "airplay"], status["settings"])
    with open(os.path.join(page_host.folder, "state-receiver", "page-settings.yaml")) as kept:
        text = kept.read()
    check("kept in the page's file, as the page keeps its changes: lights: on", "lights: on" in text, text)
    check("kept in the page's file: max_brightness: 40", "max_brightness: 40" in text, text)
    check("kept in the page's file: sound: airplay", "sound: airplay" in text, text)

    broker.publish(f"{BASE}/check/press", "PRESS")
    check("the wiring check's button lights the lines one at a time", page_shows(
        page_host, key, lambda status: status.get("checking") is not None))

    page_status(page_host.address, key, send=[{"type": "set", "id": 1, "key": "receiver.max_brightness",
                                                "value": "70"}])
    check("a change on the page reaches the broker", wait_for(
        lambda: json.loads(state("light/state") or "{}").get("brightness") == 70, 5), state("light/state"))


BAD = [
    ("light/set", "x" * 600, "too long"),
    ("light/set", "ON", "is not a JSON light command"),
    ("light/set", b"\xff\xfe\x00", "not UTF-8"),
    ("light/set", '{"effect":"rainbow"}', "effect \"rainbow\" is not allowed"),
    ("light/set", '{"brightness":1000}', "out of range"),
    ("sound/set", "pipe:/etc/shadow", "is not one of the options"),
    ("sound/set", "hw:9,0", "is not one of the options"),
    ("palette/set", "red", "is not one of the options"),
    ("check/press", "rm -rf /", "allowed: PRESS"),
]


def test_bad_payloads_from_the_shared_bus_change_nothing(page_host, broker, check):
    process, key = receiver(page_host, broker)
    assert online(broker), process.log()[-1500:]
    time.sleep(0.5)
    before = {topic: payload for topic, payload in broker.retained(f"{BASE}/#").items() if "levels" not in topic}
    rows = page_status(page_host.address, key)["settings"]
    for topic, payload, _ in BAD:
        broker.publish(f"{BASE}/{topic}", payload)
    time.sleep(1.5)
    after = {topic: payload for topic, payload in broker.retained(f"{BASE}/#").items() if "levels" not in topic}
    check("the retained state is as before", after == before, {k: (before.get(k), after.get(k))
                                                               for k in set(before) | set(after)
                                                               if before.get(k) != after.get(k)})
    check("the page's settings are as before", page_status(page_host.address, key)["settings"] == rows)
    check("nothing was kept", not os.path.exists(os.path.join(page_host.folder, "state-receiver",
                                                              "page-settings.yaml")))
    log = process.log()
    refusals = [line for line in log.splitlines() if "nothing changed" in line]
    for topic in ("light/set", "sound/set", "palette/set", "check/press"):
        first = next(reason for bad_topic, _, reason in BAD if bad_topic == topic)
        check(f"{topic}: the first bad payload is answered with one line that says why",
              any(f"{BASE}/{topic}" in line and first in line for line in refusals), refusals)
    check("a flood on one topic is held to one line every 10 s", len(refusals) == 4, refusals)
    check("the receiver runs on", process.alive(), process.log()[-800:])
    check("the receiver stays online", online(broker, timeout=1), broker.retained(f"{BASE}/availability"))


def test_a_missing_broker_and_a_restarting_one_cost_a_line_and_never_a_lamp(page_host, broker, spawn, check):
    broker.stop()
    process, _ = receiver(page_host, broker)
    counter_sender(spawn, "sender", page_host)
    check("no broker: the lamps follow the sender all the same",
          wait_for(lambda: any(sum(level) for level in levels(process, 0)), 10))
    check("one line says the broker cannot be reached, and that it is retried", wait_for(
        lambda: "cannot reach the broker" in process.log(), 5), process.log()[-1500:])
    time.sleep(3)
    check("retries do not fill the log", process.log().count("cannot reach the broker") == 1)
    broker.start()
    check("the broker comes: connected, online", online(broker, timeout=20), process.log()[-1500:])
    broker.stop()
    stopped = time.clock_gettime(time.CLOCK_MONOTONIC)
    check("the broker goes: one line", wait_for(lambda: "lost the broker" in process.log(), 5), process.log()[-800:])
    time.sleep(2)
    shown = levels(process, stopped)
    check("the lamps go on while the broker is away: more than 100 frames", len(shown) > 100, len(shown))
    check("the lamps go on while the broker is away: lit", any(map(sum, shown)), f"{len(shown)} frames, all dark")
    broker.start()
    check("it comes back: connected again, online retained again (the broker kept nothing)",
          online(broker, timeout=20), process.log()[-800:])
    check("it comes back: the ten configs retained again", len(configs(broker)) == 10,
          f"{len(configs(broker))} configs")
    check("one line for the broker lost", process.log().count("lost the broker") == 1, process.log()[-1500:])
    check("one line for connected again", process.log().count("connected again") == 1, process.log()[-1500:])
    spawn.processes[-1].stop()  # the sender
    time.sleep(2)
    check("the sender stops: the lamps are dark, none stuck on", levels(process, 0)[-1] == (0, 0, 0),
          levels(process, 0)[-3:])


def test_refused_credentials_cost_a_line_never_show_the_password_and_never_a_lamp(page_host, spawn, check, tmp_path):
    folder = tmp_path / "broker"
    folder.mkdir()
    broker = Broker(str(folder), host=page_host.peer.test_address, users={"home": "right-password"})
    try:
        password = tmp_path / "mqtt-password"
        password.write_text("wrong-password\n")
        process, _ = page_host.receiver(
            "receiver", "--name", "Living room",
            env={"LIGHTORGAN_MQTT_BROKER": broker.url, "LIGHTORGAN_MQTT_USERNAME": "home",
                 "LIGHTORGAN_MQTT_PASSWORD_FILE": str(password)})
        counter_sender(spawn, "sender", page_host)
        check("the lamps follow the sender", wait_for(lambda: any(sum(level) for level in levels(process, 0)), 10))
        check("one line: the broker refused the credentials, which settings to look at", wait_for(
            lambda: "refused the connection" in process.log() and "mqtt.password_file" in process.log(), 10),
            process.log()[-1500:])
        time.sleep(3)
        check("once, whatever the retries", process.log().count("refused the connection") == 1)
        check("the password is never in the log", "wrong-password" not in process.log())
    finally:
        broker.stop()


def test_over_tls_the_receiver_trusts_mqtt_ca_file_and_without_it_says_which_setting(page_host, spawn, check,
                                                                                     tmp_path):
    folder = tmp_path / "broker"
    folder.mkdir()
    broker = Broker(str(folder), host=page_host.peer.test_address, tls=True)
    try:
        process, _ = receiver(page_host, broker, "untrusting")
        counter_sender(spawn, "sender", page_host)
        check("the broker's authority is not the system's: one line says the certificate failed and names "
              "mqtt.ca_file", wait_for(lambda: "certificate verify failed" in process.log()
                                       and "mqtt.ca_file" in process.log(), 10), process.log()[-1500:])
        check("the lamps follow the sender all the same",
              wait_for(lambda: any(sum(level) for level in levels(process, 0)), 10))
        time.sleep(3)
        check("once, whatever the retries", process.log().count("certificate verify failed") == 1,
              process.log()[-1500:])
        check("nothing reached the broker in the clear", not broker.retained(f"{PREFIX}/#"))
        process.stop()
        spawn.processes[-1].stop()  # the sender
        trusting, _ = receiver(page_host, broker, "trusting", env={"LIGHTORGAN_MQTT_CA_FILE": broker.ca_file})
        check("with mqtt.ca_file: connected over TLS, online", online(broker), trusting.log()[-1500:])
        check("the configs too", wait_for(lambda: len(configs(broker)) == 10, 5))
        check("the log names mqtts://", f"connected to mqtts://{broker.host}:{broker.port}" in trusting.log(),
              trusting.log()[-800:])
    finally:
        broker.stop()


@pytest.mark.discovery
def test_with_broker_auto_the_receiver_finds_the_broker_dns_sd_announces(new_host, spawn, check, tmp_path):
    host = new_host("home-server")
    folder = tmp_path / "broker"
    folder.mkdir()
    broker = Broker(str(folder), host="127.0.0.1", wrapper=host.wrapper)
    try:
        process = spawn("receiver", "receive", "--port", "0", "--output", "stdout", "--stats-interval", "0",
                        "--name", "Living room", wrapper=host.wrapper, env={"LIGHTORGAN_MQTT_BROKER": "auto"})
        check("no broker announced yet: one line says the receiver looks on", wait_for(
            lambda: "no broker announces itself" in process.log(), 15), process.log()[-1500:])
        spawn.command("announce", [*host.wrapper, "avahi-publish", "-s", "Mosquitto", "_mqtt._tcp", str(broker.port)])
        check("announced: found and connected, online", online(broker, timeout=20), process.log()[-1500:])
        check("the log says it found the broker", "found the broker" in process.log(), process.log()[-800:])
        check("the log says which broker: its port", f":{broker.port}" in process.log(), process.log()[-800:])
    finally:
        spawn.stop_all()
        broker.stop()


def test_the_tempo_of_the_receivers_own_sound_reaches_the_broker_and_the_page(page_host, broker, spawn, check,
                                                                             signals, tmp_path):
    """A 120 BPM groove for 10 s into the receiver's pipe (`receiver.sound: pipe:…`), then 6 s of silence: the
    status topic, which Home Assistant's Tempo sensor reads, says bpm 120 while the beat is held and 0 at once when
    it is lost; the page's status says the same."""
    fifo = str(tmp_path / "spotify")
    process, key = receiver(page_host, broker, "receiver", "--sound", f"pipe:{fifo}", "--play", "none")
    assert online(broker), process.log()[-1500:]
    watcher = broker.messages(spawn, "status", f"{BASE}/status")
    writer = spawn.command("writer", [sys.executable, WRITER, signals["groove.raw"], fifo, str(tmp_path / "w.log")])

    def bpms():
        return [json.loads(message.payload).get("bpm") for message in watcher.on(f"{BASE}/status")]
    check("the status topic says bpm 120 within 8 s of the groove's start",
          watcher.wait(lambda _: 120 in bpms(), 8), bpms())
    seen = []
    check("the page's status says bpm 120 while the groove plays", page_shows(
        page_host, key, lambda status: seen.append((status.get("bpm"), status.get("place"))) or
        status.get("bpm") == 120), seen[-3:])
    # From the lock to the first beat announced the tempo is held and no beat has a place yet.
    check("the page's status names the latest beat's place in the bar (1…4)", page_shows(
        page_host, key, lambda status: seen.append((status.get("bpm"), status.get("place"))) or
        1 <= (status.get("place") or 0) <= 4), seen[-3:])
    check("the status topic says bpm 0 once the silence lets the beat go",
          watcher.wait(lambda _: 120 in bpms() and bpms()[-1] == 0, 14), bpms())
    writer.wait(timeout=30)


def fetch_up_front(request):
    """Home Assistant's venv (about a minute, once), when its test is selected: beside the builds."""
    if any(item.name.startswith("test_a_real_home_assistant") for item in request.session.items):
        home_assistant.venv()


@pytest.mark.slow
def test_a_real_home_assistant_sees_controls_and_loses_the_receiver(page_host, broker, spawn, check, figure,
                                                                     tmp_path):
    """Home Assistant 2024.3.3 from PyPI, onboarded and linked to the broker through its REST API; then, through
    its own API: the light and its effects, turn_on with an effect, turn_off darkening the lamps while a sender
    streams, AirPlay chosen in the sound select, the level sensors, and the entities unavailable while the receiver
    is killed. How long a command takes from Home Assistant's API to the lamps, over 50 commands."""
    folder = tmp_path / "home-assistant"
    folder.mkdir()
    hass = home_assistant.HomeAssistant(str(folder), page_host.peer.test_address, broker.port)
    try:
        figure(f"Home Assistant {home_assistant.VERSION} started, onboarded and linked in {hass.seconds:.1f} s")
        process, key = receiver(page_host, broker)
        counter_sender(spawn, "sender", page_host)
        light = "light.living_room"
        check("the light appears, available, with the eight effects", wait_for(
            lambda: (hass.state(light) or {}).get("state") == "on" and hass.state(light)["attributes"].get(
                "effect_list") == EFFECTS, 30), hass.state(light))
        check("the Tempo sensor appears, 0 BPM while nothing plays", wait_for(
            lambda: (hass.state("sensor.living_room_tempo") or {}).get("state") == "0", 15),
              hass.state("sensor.living_room_tempo"))

        hass.call("light", "turn_on", {"entity_id": light, "effect": "flash"})
        check("light.turn_on with effect flash sets the strip's effect", page_shows(
            page_host, key, lambda status: row(status, "receiver.strip.effect").get("value") == "flash"))

        # 50 commands, off and on in turn, each timed from Home Assistant's API to the first frame that shows it.
        delays = []
        for index in range(50):
            off = index % 2 == 0
            called = time.clock_gettime(time.CLOCK_MONOTONIC)
            hass.call("light", "turn_off" if off else "turn_on", {"entity_id": light})
            if wait_for(lambda: any((sum(level) == 0) == off for level in levels(process, called)), 5):
                first = next(float(fields[0]) for fields in process.lines() if len(fields) == 4
                             and float(fields[0]) > called and (sum(map(int, fields[1:4])) == 0) == off)
                delays.append((first - called) * 1000)
            time.sleep(0.2)
        delays.sort()
        p50, p95 = (delays[len(delays) // 2], delays[int(len(delays) * 0.95)]) if delays else (None, None)
        figure(f"Home Assistant's light.turn_on/turn_off to the lamps: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
               f"over {len(delays)} commands" if delays else "no command reached the lamps")
        check("each of 50 commands reached the lamps", len(delays) == 50, f"{len(delays)} reached")
        check("commands reach the lamps with p95 within 250 ms", p95 is not None and p95 <= 250,
              f"{len(delays)} reached; p50 {p50}, p95 {p95}")
        hass.call("light", "turn_off", {"entity_id": light})
        time.sleep(1)
        since = time.clock_gettime(time.CLOCK_MONOTONIC)
        time.sleep(1)
        shown = levels(process, since)
        check("light.turn_off: more than 50 frames shown while the sender streams", len(shown) > 50,
              f"{len(shown)} frames")
        check("light.turn_off darkens the lamps", not any(map(sum, shown)),
              f"{len(shown)} frames, {sum(1 for level in shown if sum(level))} lit")
        hass.call("light", "turn_on", {"entity_id": light})

        hass.call("select", "select_option", {"entity_id": "select.living_room_sound_source", "option": "airplay"})
        check("AirPlay chosen in the sound select sets receiver.sound", page_shows(
            page_host, key, lambda status: row(status, "receiver.sound").get("value") == "airplay"))
        check("the level sensors reach Home Assistant", wait_for(
            lambda: all((hass.state(f"sensor.living_room_{band}_level") or {}).get("state", "").isdigit()
                        for band in ("bass", "mid", "treble")), 10),
              [hass.state(f"sensor.living_room_{band}_level") for band in ("bass", "mid", "treble")])

        process.kill()
        check("killed: its entities are unavailable", wait_for(
            lambda: (hass.state(light) or {}).get("state") == "unavailable", 10), hass.state(light))
        receiver(page_host, broker, "receiver-again", state=os.path.join(page_host.folder, "state-receiver"))
        check("restarted: available again", wait_for(
            lambda: (hass.state(light) or {}).get("state") in ("on", "off"), 15), hass.state(light))
    finally:
        hass.stop()

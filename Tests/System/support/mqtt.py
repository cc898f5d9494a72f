"""A real Mosquitto broker (Debian's `mosquitto`, started by the test on a port of its own) and its own clients
(`mosquitto_sub`, `mosquitto_pub` from mosquitto-clients), for the receiver's link to Home Assistant.

The broker listens on one address of the test's namespace, anonymous or with a password file of its own, in the
clear or over TLS with a certificate of a test authority made here with openssl (`ca_file`); it logs to its folder. `Broker.messages(...)` starts a subscriber whose every message is a line "UNIX-TIME TOPIC RETAINED
PAYLOAD" (tab-separated: mosquitto_sub -F), read back as `Message`s."""
import collections
import os
import socket
import subprocess
import time

from support.processes import Process, free_port, wait_for

Message = collections.namedtuple("Message", "time topic retained payload")
FORMAT = "%U\t%t\t%r\t%p"


class Broker:
    def __init__(self, folder, host="127.0.0.1", port=None, users=None, wrapper=(), tls=False):
        """`users`: {name: password} for a broker that refuses anonymous clients; `wrapper`: the command the
        broker and its clients run through (a namespace's); `tls`: mqtts:// only, its certificate (for `host`)
        signed by an authority of the test's (`ca_file`)."""
        self.folder, self.host, self.wrapper, self.tls = folder, host, list(wrapper), tls
        self.port = port or free_port(host)
        self.users = users or {}
        self.conf = os.path.join(folder, "mosquitto.conf")
        # user root: started as root, mosquitto would change to its own user, who cannot write the test's folder.
        lines = [f"listener {self.port} {host}", "user root", "persistence false", f"log_dest file {folder}/mosquitto.log",
                 "log_type all", "connection_messages true"]
        if self.users:
            passwords = os.path.join(folder, "mosquitto.passwd")
            open(passwords, "w").close()
            for name, password in self.users.items():
                subprocess.run(["mosquitto_passwd", "-b", passwords, name, password], check=True)
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        else:
            lines.append("allow_anonymous true")
        self.ca_file = None
        if tls:
            self.ca_file, certificate, key = _authority_and_certificate(folder, host)
            lines += [f"cafile {self.ca_file}", f"certfile {certificate}", f"keyfile {key}"]
        with open(self.conf, "w") as conf:
            conf.write("\n".join(lines) + "\n")
        self.process, self.starts = None, 0
        self.start()

    @property
    def url(self):
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    def start(self):
        """Starts the broker (again, on the same port) and waits until it accepts connections."""
        self.starts += 1
        self.process = Process(self.folder, f"mosquitto-{self.starts}", [*self.wrapper, "mosquitto", "-c", self.conf])

        def accepts():
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return True
            except OSError:
                return False
        # From another namespace's wrapper the probe cannot connect: then the log says it listens.
        if not wait_for(lambda: accepts() or "listen socket on port" in self.log(), 10):
            raise RuntimeError(f"mosquitto did not start: {self.log()[-500:]}")

    def stop(self):
        if self.process is not None:
            self.process.stop(timeout=3)

    def log(self):
        try:
            with open(os.path.join(self.folder, "mosquitto.log"), errors="replace") as log:
                return log.read()
        except OSError:
            return ""

    def _client(self, user):
        arguments = ["-h", self.host, "-p", str(self.port), *(["--cafile", self.ca_file] if self.tls else [])]
        if user:
            arguments += ["-u", user, "-P", self.users[user]]
        return arguments

    def publish(self, topic, payload, retain=False, user=None):
        """`payload` (str or bytes) on `topic`, QoS 1."""
        data = payload.encode() if isinstance(payload, str) else payload
        subprocess.run([*self.wrapper, "mosquitto_pub", *self._client(user), "-q", "1", "-t", topic, "-s",
                        *(["-r"] if retain else [])], input=data, check=True, timeout=10)

    def retained(self, topic="#", user=None):
        """{topic: payload} of every retained message under `topic` now."""
        result = subprocess.run([*self.wrapper, "mosquitto_sub", *self._client(user), "-t", topic, "--retained-only",
                                 "-W", "1", "-F", FORMAT], capture_output=True, text=True, timeout=10)
        return {message.topic: message.payload for message in _parse(result.stdout)}

    def messages(self, spawn, name, topic="#", user=None):
        """A subscriber to `topic` started with `spawn` (stopped with the test): `Subscriber`."""
        process = spawn.command(name, [*self.wrapper, "mosquitto_sub", *self._client(user), "-q", "1", "-t", topic,
                                       "-F", FORMAT])
        subscriber = Subscriber(process)
        # mosquitto_sub connects and subscribes in a few ms; a message published before that would be missed.
        time.sleep(0.3)
        return subscriber


class Subscriber:
    def __init__(self, process):
        self.process = process

    def all(self):
        return _parse(self.process.output())

    def on(self, topic):
        return [message for message in self.all() if message.topic == topic]

    def wait(self, condition, timeout=10):
        """Waits until `condition(messages)` holds; whether it did."""
        return wait_for(lambda: condition(self.all()), timeout)


def _parse(text):
    messages = []
    for line in text.splitlines():
        parts = line.split("\t", 3)
        if len(parts) == 4:
            messages.append(Message(float(parts[0]), parts[1], parts[2] == "1", parts[3]))
    return messages


def _authority_and_certificate(folder, host):
    """A test certificate authority and the broker's certificate for `host` (an address: its IP in subjectAltName,
    which libmosquitto checks), both made with openssl; (CA file, certificate, key)."""
    ca_key, ca_file = os.path.join(folder, "ca.key"), os.path.join(folder, "ca.pem")
    key, request, certificate = (os.path.join(folder, name) for name in ("broker.key", "broker.csr", "broker.pem"))
    run = lambda *command: subprocess.run(["openssl", *command], check=True, capture_output=True, timeout=30)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
        "-subj", "/CN=lightorgan test authority", "-keyout", ca_key, "-out", ca_file)
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", f"/CN={host}",
        "-keyout", key, "-out", request)
    extensions = os.path.join(folder, "broker.ext")
    with open(extensions, "w") as file:
        file.write(f"subjectAltName=IP:{host}\nbasicConstraints=CA:FALSE\n")
    run("x509", "-req", "-in", request, "-CA", ca_file, "-CAkey", ca_key, "-CAcreateserial", "-days", "2",
        "-extfile", extensions, "-out", certificate)
    return ca_file, certificate, key

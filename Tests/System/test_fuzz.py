"""The fuzzers (`lightorgan-fuzz`, release build): property-based fuzzing of everything that parses
untrusted input — frame decoding, the connection policy, the settings loader, the page's requests,
audio and settings messages, the commands from a shared MQTT broker. Each target is a test; a failure names its seed, so it can be replayed
with `lightorgan-fuzz TARGET --seed S`."""
import os
import subprocess

import pytest

TARGETS = ("assembler", "handler", "arbiter", "settings-catalog", "settings", "settings-file", "page-requests",
           "page-audio", "page-settings", "page-admission", "home-commands")


@pytest.fixture(scope="session")
def fuzzer(lightorgan):
    path = os.path.join(os.path.dirname(lightorgan), "..", "release", "lightorgan-fuzz")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: scripts/test builds it (scripts/lib/prepare.sh's `build_flags`)")
    return path


@pytest.mark.parametrize("target", TARGETS)
def test_no_property_breaks_on_random_input(fuzzer, target, figure, request):
    # The quick tier fuzzes a tenth of each target's inputs (new seeds each run); the full tier all of them.
    share = ["--share", "10"] if request.config.getoption("--quick") else []
    result = subprocess.run([fuzzer, target, *share], capture_output=True, text=True, timeout=600)
    line = next((line for line in result.stdout.splitlines() if line.startswith(f"fuzz {target}:")), result.stdout)
    assert result.returncode == 0, line
    figure(line)

"""Upgrades through apt from the served repository: the owner's settings and the page's state kept, a repository
signed with another key refused, and a purge that leaves nothing behind. The set-up (repositories, server,
roots): support/apt_release.py.
"""
import os
import re
import time

import pytest

from support.apt_release import (  # noqa: F401 (fetch_up_front, prepare_beside: conftest runs them)
    CONFFILE,
    STATE,
    UNIT,
    fetch_up_front,
    install_sh,
    installed_version,
    prepare_beside,
    read_in_root,
    sh_in_root,
    state_files,
    tail,
)

pytestmark = [pytest.mark.release, pytest.mark.package, pytest.mark.timeout(1800)]


# -- upgrade, another key, purge --------------------------------------------------------------

@pytest.mark.slow
def test_upgrade_keeps_settings_and_page_state_refuses_another_key_and_purge_cleans_up(
        server, prepared_roots, root_folder, tmp_path, check, figure):
    versions = server.versions
    root = prepared_roots.copy("bookworm", "arm64", root_folder)
    server.flip("N")
    first, _ = install_sh(root, tmp_path / "install.txt")
    if installed_version(root) != versions["N"]:
        pytest.fail(f"install.sh did not install lightorgan {versions['N']}:\n{tail(first.stdout, 20)}")

    # The owner's edit of the settings, and the page's state made by the installed receiver itself (as the
    # service runs it, with systemd's STATE_DIRECTORY; `timeout`: it never outlives the test).
    edit = "\n# edited by the owner (test_upgrade): kept across upgrades\n"
    with open(os.path.join(root, CONFFILE.lstrip("/")), "a") as settings:
        settings.write(edit)
    edited = read_in_root(root, CONFFILE)
    receiver = sh_in_root(root, f"""
STATE_DIRECTORY={STATE} timeout 120 lightorgan receive --config {CONFFILE} --output stdout --bind 127.0.0.1 --port 28181 \\
    >/tmp/receive.out 2>/tmp/receive.log &
pid=$!
for i in $(seq 300); do
    [ -s {STATE}/page-secret ] && [ -s {STATE}/page-certificate.pem ] && [ -s {STATE}/page-key.pem ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.2
done
sleep 1
kill -TERM $pid; wait $pid; echo "receiver status $?"
cat /tmp/receive.log""", timeout=300)
    with open(tmp_path / "receive.txt", "w") as log:
        log.write(receiver.stdout)
    state = state_files(root)
    check("the installed receiver made its page's state in /var/lib/lightorgan (page-secret, page-certificate.pem, "
          "page-key.pem)", {"page-secret", "page-certificate.pem", "page-key.pem"} <= set(state),
          f"{sorted(state)}: {tail(receiver.stdout, 5)}")

    server.flip("N+1")
    started = time.monotonic()
    upgrade = sh_in_root(root, "export DEBIAN_FRONTEND=noninteractive; apt-get update -q && apt-get upgrade -y -q")
    figure(f"bookworm arm64: apt-get update && apt-get upgrade to N+1 in {time.monotonic() - started:.1f} s")
    with open(tmp_path / "upgrade.txt", "w") as log:
        log.write(upgrade.stdout)
    now = installed_version(root)
    check("after `current` moves to N+1, apt-get update && apt-get upgrade -y exits 0", upgrade.returncode == 0,
          f"exit {upgrade.returncode}: {tail(upgrade.stdout, 6)}")
    check(f"…and installs lightorgan {versions['N+1']}", now == versions["N+1"], f"installed {now}")
    check(f"the owner's edit of {CONFFILE} (a conffile) is kept across the upgrade", read_in_root(root, CONFFILE) == edited)
    kept = state_files(root)
    check("the page's secret, certificate and key are unchanged by the upgrade", kept == state,
          f"before {sorted(state)}, after {sorted(kept)}")
    check("…there was a state to keep (files in /var/lib/lightorgan before the upgrade)", state, f"{sorted(state)}")

    server.flip("other-key")
    refused = sh_in_root(root, "export DEBIAN_FRONTEND=noninteractive; apt-get update -q; echo \"update status $?\"; "
                            "apt-get upgrade -y -q; apt-cache policy lightorgan")
    with open(tmp_path / "other-key.txt", "w") as log:
        log.write(refused.stdout)
    # apt refuses the new index of a source it trusted before with a warning, not an error: "The repository is
    # not updated and the previous index files will be used" (apt-get update then exits 0).
    check("apt-get update says the other key is unknown (NO_PUBKEY)", re.search(r"NO_PUBKEY", refused.stdout),
          tail(refused.stdout, 6))
    check("apt-get update refuses the repository signed with another key (previous index used, not signed)",
          re.search(r"is not updated and the previous index files will be used|is not signed", refused.stdout),
          tail(refused.stdout, 6))
    now = installed_version(root)
    check(f"lightorgan stays at {versions['N+1']}", now == versions["N+1"], f"installed {now}")
    check(f"the other key's {versions['N+2']} is neither installed nor a candidate",
          versions["N+2"] not in refused.stdout, tail(refused.stdout, 6))

    purge = sh_in_root(root, "export DEBIAN_FRONTEND=noninteractive; apt-get purge -y -q lightorgan", network=False)
    with open(tmp_path / "purge.txt", "w") as log:
        log.write(purge.stdout)
    left = [path for path in ("/etc/lightorgan", STATE, "/var/lib/private/lightorgan", "/usr/bin/lightorgan", UNIT,
                              "/etc/systemd/system/multi-user.target.wants/lightorgan-receiver.service")
            if os.path.lexists(os.path.join(root, path.lstrip("/")))]
    check("apt-get purge lightorgan exits 0", purge.returncode == 0,
          f"exit {purge.returncode}: {tail(purge.stdout, 4)}")
    check("after the purge dpkg has lightorgan no more", installed_version(root) is None, tail(purge.stdout, 4))
    check("apt-get purge lightorgan leaves nothing in /etc/lightorgan, /var/lib/lightorgan, /usr/bin/lightorgan, "
          "the unit", not left, f"left: {left}")
    user = sh_in_root(root, "id lightorgan", network=False)
    check("the system user lightorgan remains after the purge", user.returncode == 0, user.stdout.strip())

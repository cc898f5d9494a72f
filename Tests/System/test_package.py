"""The Debian package as Debian's own tools see it: lintian, and the manual pages and completions it installs.

- lintian -I on both packages: no error, no warning.
- The manual pages (one per command, from the argument parser) and the bash, zsh and fish completions are in
  both packages at Debian's paths; `man -l` renders a page without a groff warning; bash loads the completion.
Rules: the packages are --pi-package and --amd64-package (else built); the amd64 one's files come unpacked with
dpkg-deb (`unpacked`, conftest.py). test_package_sandbox.py runs its service.
"""
import json
import os
import re
import time

import pytest

from support.apt_release import run, tail

pytestmark = [pytest.mark.release, pytest.mark.package]

COMPLETIONS = {"bash": "usr/share/bash-completion/completions/lightorgan",
               "zsh": "usr/share/zsh/vendor-completions/_lightorgan",
               "fish": "usr/share/fish/vendor_completions.d/lightorgan.fish"}


def _package(request, arch):
    return request.getfixturevalue("pi_package" if arch == "arm64" else "amd64_package")


def _commands(dump):
    """Every command's name path ("lightorgan", "lightorgan.receive", …) in a --experimental-dump-help tree."""
    names, pending = [], [((), dump["command"])]
    while pending:
        parents, command = pending.pop()
        path = (*parents, command["commandName"])
        names.append(".".join(path))
        pending += [(path, sub) for sub in command.get("subcommands", [])]
    return sorted(names)


# -- lintian, manual pages, completions ----------------------------------------------------------

@pytest.mark.parametrize("arch", ["arm64", pytest.param("amd64", marks=pytest.mark.amd64)])
def test_lintian_finds_no_error_and_no_warning(arch, request, check, figure):
    deb = _package(request, arch)
    started = time.monotonic()
    result = run(["lintian", "-I", "--tag-display-limit", "0", deb], timeout=600)
    print(result.stdout)
    tags = [line for line in result.stdout.splitlines() if re.match(r"[EWINPX]: ", line)]
    bad = [line for line in tags if line[0] in "EW"]
    check(f"{arch}: lintian -I {os.path.basename(deb)} exits 0", result.returncode == 0,
          f"exit {result.returncode}: {tail(result.stderr, 5)}")
    check(f"{arch}: lintian -I {os.path.basename(deb)} gives no error and no warning", not bad, "\n".join(bad[:20]))
    figure(f"{arch}: lintian -I: {len(tags)} tags ({', '.join(sorted({line.split()[2] for line in tags})) or 'none'}) "
           f"in {time.monotonic() - started:.0f} s")


def test_both_packages_hold_a_manual_page_per_command_and_the_completions(pi_package, amd64_package, unpacked,
                                                                           check):
    dump = json.loads(run([os.path.join(unpacked, "usr/bin/lightorgan"), "--experimental-dump-help"]).stdout)
    pages = {f"usr/share/man/man1/{name}.1.gz" for name in _commands(dump)}
    for deb in (pi_package, amd64_package):
        listing = {line.split()[-1].lstrip("./") for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines()}
        name = os.path.basename(deb)
        check(f"{name}: a manual page for each of the {len(pages)} commands the argument parser knows",
              pages <= listing, f"missing: {sorted(pages - listing)}")
        check(f"{name}: the bash, zsh and fish completions at Debian's paths",
              set(COMPLETIONS.values()) <= listing, f"missing: {sorted(set(COMPLETIONS.values()) - listing)}")
        check(f"{name}: the changelog (a native package's: changelog.gz) and copyright",
              {"usr/share/doc/lightorgan/changelog.gz", "usr/share/doc/lightorgan/copyright"} <= listing)

    page = os.path.join(unpacked, "usr/share/man/man1/lightorgan.receive.1.gz")
    rendered = run(["man", "--warnings", "-E", "UTF-8", "-l", page], env={**os.environ, "MANWIDTH": "80"})
    print(rendered.stdout[:1200])
    check("man -l renders lightorgan.receive.1.gz (exit 0)", rendered.returncode == 0,
          f"exit {rendered.returncode}: {tail(rendered.stderr or rendered.stdout, 5)}")
    check("…its name", re.search(r"lightorgan.receive", rendered.stdout), tail(rendered.stdout, 5))
    check("…its synopsis", "SYNOPSIS" in rendered.stdout, tail(rendered.stdout, 5))
    check("…its --output option", "--output" in rendered.stdout, tail(rendered.stdout, 5))
    check("…no groff warning", not rendered.stderr.strip(), tail(rendered.stderr, 5))
    bash = os.path.join(unpacked, COMPLETIONS["bash"])
    loaded = run(["bash", "-c", f"source {bash} && complete -p lightorgan"])
    check("bash loads the completion: `complete -p lightorgan` exits 0", loaded.returncode == 0,
          f"exit {loaded.returncode}: {tail(loaded.stdout + loaded.stderr, 3)}")
    check("`complete -p lightorgan` names its function",
          re.match(r"complete .*-F \S+ lightorgan", loaded.stdout.strip()), tail(loaded.stdout + loaded.stderr, 3))
    for shell in ("zsh", "fish"):
        with open(os.path.join(unpacked, COMPLETIONS[shell])) as script:
            text = script.read()
        check(f"the {shell} completion names lightorgan", "lightorgan" in text, text.partition("\n")[0])
        check(f"the {shell} completion is the argument parser's",
              "#compdef lightorgan" in text if shell == "zsh" else "complete -c" in text, text.partition("\n")[0])


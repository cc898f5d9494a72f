"""The real-music corpus of the music benchmark: 30-s excerpts of freely licensed recordings that Debian ships.

Usage: music_corpus.py CACHE_DIR [--sums] [TRACK...]   (scripts/music-corpus), or `tracks(names)` from a test.

Downloads the pinned Debian packages (`apt-get download package=version`) into CACHE_DIR/debs, checks
their sha256, unpacks the one file each track needs and decodes the excerpt with sox into
CACHE_DIR/tracks/NAME.wav (44.1 kHz, 16 bit, stereo, no dither), then checks the WAV's sha256 too.
Tracks already built and matching their sum are kept; two runs at once take turns (a lock in CACHE_DIR).
Prints the tracks folder as its last line.
`--sums` prints the sums it finds instead of checking them (for adding a track).
No audio is committed; the licences are those of the packages (see their /usr/share/doc/*/copyright).
"""
import fcntl
import fnmatch
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

# name, package=version, file inside the package, start s, sox effects, what it is
# The names say what a listener hears, so a table of results reads without this list.
TRACKS = [
    ("uptempo-electronic", "extremetuxracer-data=0.8.2-1", "usr/share/games/etr/music/race1-jt.ogg", 20, [], "up-tempo electronic, loud"),
    ("uptempo-electronic-quiet", "extremetuxracer-data=0.8.2-1", "usr/share/games/etr/music/race1-jt.ogg", 20, ["gain", "-24"], "the same 24 dB quieter: loudness must not matter"),
    ("rock", "extremetuxracer-data=0.8.2-1", "usr/share/games/etr/music/spunkyrace-ks.ogg", 20, [], "guitar and drums"),
    ("synth-pop", "extremetuxracer-data=0.8.2-1", "usr/share/games/etr/music/freezingpoint.ogg", 20, [], "synth pop"),
    ("ballad", "extremetuxracer-data=0.8.2-1", "usr/share/games/etr/music/credits1-cp.ogg", 20, [], "slow, soft"),
    ("chiptune-pop", "frozen-bubble-data=2.212-11", "usr/share/games/frozen-bubble/snd/frozen-mainzik-1p.ogg", 60, [], "bright, busy"),
    ("electronic-dark", "xmoto-data=0.6.1+repack-9", "usr/share/games/xmoto/Textures/Musics/batcave.ogg", 40, [], "electronic, heavy bass"),
    ("funk-rock", "xmoto-data=0.6.1+repack-9", "usr/share/games/xmoto/Textures/Musics/foxrun.ogg", 20, [], "band with drums"),
    ("blues", "lincity-ng-data=2.9~git20150314-5", "usr/share/games/lincity-ng/music/default/02 - Robert van Herk - City Blues.ogg", 30, [], "blues"),
    ("ambient-electronic", "lincity-ng-data=2.9~git20150314-5", "usr/share/games/lincity-ng/music/default/01 - pronobozo - lincity.ogg", 40, [], "calm electronic"),
    ("orchestral-battle", "wesnoth-1.16-music=1:1.16.9-1", "usr/share/games/wesnoth/1.16/data/core/music/battle.ogg", 60, [], "full orchestra, percussion"),
    ("orchestral-quiet", "wesnoth-1.16-music=1:1.16.9-1", "usr/share/games/wesnoth/1.16/data/core/music/love_theme.ogg", 20, [], "soft strings and winds"),
    ("speech", "ktuberling-data=4:22.12.3-1", "usr/share/ktuberling/sounds/fr/*.wav", 0, [], "spoken phrases, one voice, pauses between"),
]

# sha256 of each package file, then of each decoded excerpt.
PACKAGE_SUMS = {
    "extremetuxracer-data=0.8.2-1": "8ce6c82e6fb89549d284f43f6c4b0a9d82e6c0e5da753bee0ef419276a21470c",
    "frozen-bubble-data=2.212-11": "39cdfd07d9532d1558762cf265a844d09015c4540568573c50f444cc084166e0",
    "xmoto-data=0.6.1+repack-9": "458966c8291579df7dd215a3ebf48cb89fc94e94fe871d124b542eb6233c0e66",
    "lincity-ng-data=2.9~git20150314-5": "8f5e85bd42879abdc7099b035d7a3d7468eceb6b93b52a12270c28f3f3c792f9",
    "wesnoth-1.16-music=1:1.16.9-1": "f9bc3cde92b4ab30db5d7b85f89b4bcc3d788dd92602956d0347250850bf59bb",
    "ktuberling-data=4:22.12.3-1": "fba44c875bfa31ea488dadd9263e87a4dcaea0bd47d28817f6c0dc6d2af970ed",
}
TRACK_SUMS = {
    "uptempo-electronic": "b7724c7dc0525c195d1641c19b91384479f9c7786170ff9e628b23f138a50418",
    "uptempo-electronic-quiet": "e37207e077e98e1e6c4c3235f42a6210ea59f52c09890b92891279c53a851a56",
    "rock": "1e8e422341808bad3deb569dd37739415f182961be667b3310341ba439529bcd",
    "synth-pop": "646f9371095448a5d4213c487461352fe25e96acef9ad7779d91dccf22fe7265",
    "ballad": "af2d1f3c8fc8842253731c5b59da7c803aeee94ca59ca2e99112d977d31f2586",
    "chiptune-pop": "136742ae0b6c667a054276e4f083d79aa6ba59d50a10da4bf7cf30fea5e20d05",
    "electronic-dark": "014af01b001eeac7ae0dac00a6f261d0d277869857578b317450eefc82c0296c",
    "funk-rock": "690e863cf2ca95f1ed0da18f48e4f3ce6fb86e4a22de91d2ed1abdb233a80667",
    "blues": "42cef04a17e9b695afc80cfb82d728e6b3311bbb6eee97f589d69daea5d660e3",
    "ambient-electronic": "b8f50c651492b411fb7a5bfbc22882d85259b61a376a16576bf0925c18e79226",
    "orchestral-battle": "867d105602a95bc346b90607e87cd4763ca2e4f334627a6efb310eb4e29d7355",
    "orchestral-quiet": "7a96a87e70b4cb2e5bc5d6caf8a2455f6a34c728499d34569d4d736a6b0ee261",
    "speech": "a0e8ab31c11c4880ef55d8b4a607c5c5665a5cedb57274e406014ba542431af8",
}

SECONDS = 30


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class CorpusError(Exception):
    """A track that cannot be made: what failed and what to do."""


def fail(message):
    raise CorpusError(f"music-corpus: {message}")


def package_file(debs, pinned, print_sums):
    """The .deb of `package=version` in `debs`, downloaded if missing, its sum checked."""
    package, version = pinned.split("=", 1)
    name = f"{package}_{version.replace(':', '%3a')}_all.deb"  # as apt-get download names it
    path = os.path.join(debs, name)
    if not os.path.exists(path):
        print(f"music-corpus: downloading {pinned}", file=sys.stderr)
        result = subprocess.run(["apt-get", "download", pinned], cwd=debs, capture_output=True, text=True)
        if result.returncode != 0 or not os.path.exists(path):
            fail(f"cannot download {pinned} ({' '.join(result.stderr.strip().splitlines()[-1:])}); "
                 "run `sudo apt-get update`, or fetch that exact version from snapshot.debian.org into " + debs)
    actual = sha256(path)
    if print_sums:
        print(f'    "{pinned}": "{actual}",')
    elif actual != PACKAGE_SUMS[pinned]:
        fail(f"{path} has sha256 {actual}, expected {PACKAGE_SUMS[pinned]}: delete it and run again")
    return path


def decode(deb, member, start, effects, out):
    """Unpacks `member` (a glob: all matches, joined in name order) and writes the excerpt to `out`."""
    with tempfile.TemporaryDirectory() as unpacked:
        subprocess.run(["dpkg-deb", "-x", deb, unpacked], check=True)
        folder, pattern = os.path.split(member)
        sources = sorted(os.path.join(unpacked, folder, f) for f in os.listdir(os.path.join(unpacked, folder)) if fnmatch.fnmatch(f, pattern))
        if not sources:
            fail(f"{member} is not in {deb}")
        # Speech: phrases one after another, each made 44.1 kHz stereo first so sox can join them.
        if len(sources) > 1:
            parts = []
            for i, source in enumerate(sources):
                part = os.path.join(unpacked, f"part{i:04}.wav")
                subprocess.run(["sox", "-D", source, "-r", "44100", "-c", "2", "-b", "16", part, "pad", "0", "0.4"], check=True)
                parts.append(part)
                if i > 40:
                    break
            joined = os.path.join(unpacked, "joined.wav")
            subprocess.run(["sox", "-D", *parts, joined], check=True)
            sources = [joined]
        temporary = out + ".part.wav"
        subprocess.run(["sox", "-D", sources[0], "-r", "44100", "-c", "2", "-b", "16", temporary,
                        "trim", str(start), str(SECONDS), *effects], check=True)
        os.replace(temporary, out)


def build(cache, wanted=(), print_sums=False):
    """Makes the `wanted` tracks (all when empty) in CACHE/tracks; the folder holding just them."""
    unknown = [w for w in wanted if w not in {t[0] for t in TRACKS}]
    if unknown:
        fail(f"no track named {', '.join(unknown)}; tracks: {', '.join(t[0] for t in TRACKS)}")
    debs, tracks = os.path.join(cache, "debs"), os.path.join(cache, "tracks")
    os.makedirs(debs, exist_ok=True)
    os.makedirs(tracks, exist_ok=True)
    if shutil.which("sox") is None:
        fail("sox is missing: sudo apt-get install sox libsox-fmt-all")
    with open(os.path.join(cache, "corpus.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, pinned, member, start, effects, _ in TRACKS:
            if wanted and name not in wanted:
                continue
            out = os.path.join(tracks, f"{name}.wav")
            if not print_sums and os.path.exists(out) and sha256(out) == TRACK_SUMS.get(name):
                continue
            deb = package_file(debs, pinned, print_sums)
            print(f"music-corpus: decoding {name}", file=sys.stderr)
            decode(deb, member, start, effects, out)
            actual = sha256(out)
            if print_sums:
                print(f'    "{name}": "{actual}",')
            elif actual != TRACK_SUMS.get(name):
                fail(f"{out} decoded to sha256 {actual}, expected {TRACK_SUMS.get(name)}: "
                     "a different sox or libvorbis than bookworm's? (the package itself matched its sum)")
        # Only the wanted tracks in the folder the benchmark reads: a subset stays a subset.
        if wanted:
            subset = os.path.join(cache, "subsets", "-".join(sorted(wanted)))
            os.makedirs(subset, exist_ok=True)
            for name in wanted:
                link = os.path.join(subset, f"{name}.wav")
                if not os.path.lexists(link):
                    os.symlink(os.path.join(tracks, f"{name}.wav"), link)
            tracks = subset
    return tracks


def tracks(names=()):
    """The folder of the `names` tracks in the suite's cache (~/.cache/lightorgan/music), made if missing."""
    from support import caches
    caches.install_packages(["sox", "libsox-fmt-all"])
    with caches.locked("music"):  # two modules' up-front fetches may ask at once
        return build(caches.folder("music"), list(names))


def main():
    arguments = sys.argv[1:]
    if not arguments:
        print("usage: music_corpus.py CACHE_DIR [--sums] [TRACK...]", file=sys.stderr)
        sys.exit(2)
    try:
        folder = build(arguments[0], [a for a in arguments[1:] if not a.startswith("--")], "--sums" in arguments)
    except CorpusError as error:
        print(error, file=sys.stderr)
        sys.exit(1)
    print(folder)


if __name__ == "__main__":
    main()

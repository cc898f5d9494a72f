"""The music goals of the dance response on recorded songs: the release `lightorgan analyze`
on two tracks of the music corpus, judged by support/music_metrics.py against an independent onset
detector (aubio). `scripts/bench-music` gives the same figures for all 13 tracks, beside the peer."""
import pytest

from support import caches, music_bench, music_corpus

TRACKS = ("funk-rock", "electronic-dark")


def fetch_up_front():
    caches.install_packages(["sox", "libsox-fmt-all", "aubio-tools"])
    music_corpus.tracks(TRACKS)


@pytest.mark.slow
def test_dance_response_meets_the_music_goals(lightorgan, check, figure):
    lines = []
    results = music_bench.measure(lightorgan, music_corpus.tracks(TRACKS), TRACKS, ("dance",),
                                  show=lines.append)
    print("\n".join(lines + music_bench.summary(results)))
    for line in music_bench.summary(results)[1:]:
        figure(line.strip())
    for name, ok, detail in music_bench.goals(results):
        check(name, ok, detail)

"""The recording the page's tests play through a sender or a browser's fake microphone (a pytest plugin,
conftest.py's `pytest_plugins`).

- `fetch_up_front()`: a module that plays it imports this as its own, so that conftest.py fetches the recording
  (the music corpus: apt downloads) once, before any test enters a namespace without a network.
- `music` (session): the path of the WAV, only looked up by then.
"""
import os

import pytest

from support import music_corpus

TRACK = "funk-rock"  # a band with drums, from the music corpus


def fetch_up_front():
    """The recording the page plays (the music corpus: apt downloads), before any namespace."""
    music_corpus.tracks([TRACK])


@pytest.fixture(scope="session")
def music():
    """A 30-s excerpt of a real recording (a band with drums): fetched up front, so only looked up here."""
    return os.path.join(music_corpus.tracks([TRACK]), f"{TRACK}.wav")

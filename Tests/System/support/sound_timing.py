"""When a sound was made and when the lamps rose, from the files of the monitor input's tests (test_monitor.py).

- stamped.py records with `reads`: each read(2) of a recording is a line "TIME BYTES_SO_FAR", TIME on the
  receivers' clock (CLOCK_MONOTONIC) as the read returned (`read_arrivals`); `tone_breaks_at` finds where a
  recorded 1 kHz tone broke off, on that clock.
- A receiver's `--output stdout` lines "TIME BASS MID TREBLE": `rises` finds the mid lamp's rises; `shift_ms`
  pairs two receivers' rises, `made_shift_ms` pairs one receiver's rises with when each burst was made;
  `nearest` finds the rise (or onset) that goes with a time.
All audio is raw 48 kHz stereo s16le.
"""
import array
import re
import statistics


def read_arrivals(reads_path):
    """[(samples so far, time)]: each read of a recording made through stamped.py (its log: time, bytes
    so far; 48 kHz stereo s16le), the time on the receivers' clock when the read returned."""
    with open(reads_path) as reads:
        return [(int(total) // 4, float(t)) for t, total in (line.split() for line in reads if len(line.split()) == 2)]


def tone_breaks_at(audio_path, reads_path):
    """When the 1 kHz tone (48 samples a period) in a raw 48 kHz stereo recording broke off, on the
    receivers' clock: a sample unlike the one a period earlier, each break counted once, at the time
    the read that brought it returned (stamped.py's log: time, bytes so far)."""
    with open(audio_path, "rb") as audio:
        data = audio.read()
    left = array.array("h", data[:len(data) // 4 * 4])[0::2]
    arrivals = read_arrivals(reads_path)
    breaks, last = [], -48000
    for place in range(48, len(left)):
        if abs(left[place] - left[place - 48]) > 500:
            if place - last > 480:
                breaks.append(next((t for end, t in arrivals if end > place), arrivals[-1][1]))
            last = place
    return breaks


def nearest(times, at, before=0.05, after=0.3):
    """The first of `times` from `before` s before `at` to `after` s after it, or None."""
    return next((t for t in times if at - before <= t <= at + after), None)


def rises(path):
    """The mid lamp's rises (receiver clock): level crossing 128 after the lamp was dark (below 32) for ≥ 5 frames or
    ≥ 20 ms, a frame caught half-way up between them. The dark spell lasts from its first dark frame until the frame
    that ends it: a frame shows until the next one, so a receiver that shows one frame per 50 ms block (a sender's
    backlog coalesced to its newest frame) was dark for a block after a single dark frame."""
    out, dark_frames, dark_from = [], 0, None

    def was_dark(now):
        return dark_frames >= 5 or (dark_from is not None and now - dark_from >= 0.02)
    with open(path) as file:
        for line in file:
            fields = line.split()
            if len(fields) != 4:
                continue
            t, m = float(fields[0]), int(fields[2])
            if m >= 128 and was_dark(t):
                out.append(t)
            if m < 32:
                dark_frames, dark_from = dark_frames + 1, dark_from if dark_from is not None else t
            elif m >= 128 or not was_dark(t):
                dark_frames, dark_from = 0, None
    return out


def shift_ms(path_a, path_b):
    """The rises in B, each paired with the nearest earlier rise in A: the mean of (rise in B − rise in
    A), ms, over the pairs within 100 ms of their median (a burst one sender missed pairs wrongly) or
    None, the number of pairs, and the rises in A and in B."""
    a, b = rises(path_a), rises(path_b)
    pairs = [(tb - max(ta for ta in a if ta <= tb)) * 1000 for tb in b if any(ta <= tb for ta in a)]
    median = statistics.median(pairs) if pairs else 0
    kept = [shift for shift in pairs if abs(shift - median) <= 100]
    return (int(f"{statistics.mean(kept):.0f}") if kept else None), len(kept), len(a), len(b)


def made_shift_ms(rises_path, log_path, references):
    """Each burst's rise in RISES_PATH against when the burst was made: its first sample's place in each
    reference recording (REFERENCES: (audio, reads) of record streams of the same monitor), timed by
    that reference's reads (the block that brought it arrived when its last sample was made; arrivals
    are only ever late, so a burst was made at the earliest arrival − place of the blocks of the 0.3 s
    from its start: the recorder's own clock near it, for under load this 10 ms recorder itself loses a
    quantum now and then, and every later place then counts 10.7 ms short), the earliest of the
    references (a PulseAudio record stream may run a whole block, 50 ms, behind another of the same
    monitor for its life: `earliest_onsets`). A rise is expected the delay in effect (the "lights
    delayed N ms" lines of LOG_PATH, stamped with the receivers' monotonic clock; none: 0) after its burst.

    Returns (median of (rise − made − delay) + mean delay, the mean delay, the spread of the middle
    half (p25–p75) of (rise − made − delay), ms, or None each; the number of rises paired with a
    burst; the rises)."""
    made = earliest_onsets(references)
    all_rises = rises(rises_path)
    if not made:
        return None, None, None, 0, len(all_rises)
    log = open(log_path).read() if log_path else ""
    changes = [(float(m[1]), int(m[2])) for m in re.finditer(r"(\d+\.\d+) .*lights delayed (\d+) ms", log)]

    def delay_at(t):
        held = [delay for at, delay in changes if at <= t]
        return held[-1] if held else 0
    pairs = []
    for rise in all_rises:
        delay = delay_at(rise)
        net = min(((rise - m) * 1000 - delay for m in made), key=abs, default=1e9)
        if abs(net) <= 100:
            pairs.append((net, delay))
    if not pairs:
        return None, None, None, 0, len(all_rises)
    net = [n for n, _ in pairs]
    mean_delay = statistics.mean(d for _, d in pairs)
    quartiles = statistics.quantiles(net, n=4) if len(net) >= 2 else [0, 0, 0]
    return (int(f"{statistics.median(net) + mean_delay:.0f}"), int(f"{mean_delay:.0f}"),
            int(f"{quartiles[2] - quartiles[0]:.0f}"), len(net), len(all_rises))



def burst_places(audio_path):
    """The place (sample frame) of each burst's first loud sample after 100 ms without one, in a raw 48 kHz
    stereo s16le recording."""
    with open(audio_path, "rb") as audio:
        samples = array.array("h", audio.read())
    places, quiet = [], 0
    for place, value in enumerate(samples[0::2]):
        if abs(value) > 3000:
            if quiet >= 4800:
                places.append(place)
            quiet = 0
        else:
            quiet += 1
    return places


def reference_onsets(reference_audio, reference_reads):
    """When each burst in a reference recording (raw 48 kHz stereo through stamped.py) was made, on the
    receivers' clock: its `burst_places`, timed by the recorder's own clock near it (the earliest arrival −
    place of the blocks of the 0.3 s from its start: arrivals are only ever late)."""
    arrivals = [(end, t - end / 48000) for end, t in read_arrivals(reference_reads)]
    if not arrivals:
        return []

    def made_at(place):
        near = [offset for end, offset in arrivals if place < end <= place + 14400]
        return (min(near) if near else min(offset for _, offset in arrivals)) + place / 48000
    return [made_at(place) for place in burst_places(reference_audio)]


def earliest(per_reference):
    """Per burst, the earliest time any reference gave it (lists of times, one per reference, matched within
    100 ms), for the bursts of the first reference that has any."""
    found = [times for times in per_reference if times]
    if not found:
        return []
    return [min([at] + [other for times in found[1:] for other in times if abs(other - at) <= 0.1])
            for at in found[0]]


def earliest_onsets(references):
    """When each burst was made, from several references ((audio, reads) of record streams of one monitor,
    started apart): per burst the `earliest` of their `reference_onsets`."""
    return earliest([reference_onsets(audio, reads) for audio, reads in references])


def handed_over_shift_ms(rises_path, references):
    """Each burst's rise in RISES_PATH against when the block that brought the burst's first sample reached the
    earliest of REFERENCES (their reads): how long an undelayed sender takes from its sound server handing the
    audio over to the lamp. The median, ms, and the number of rises paired (within 100 ms), or (None, 0)."""
    handed = []
    for audio, reads in references:
        arrivals = read_arrivals(reads)
        times = [next((t for end, t in arrivals if end > place), None) for place in burst_places(audio)]
        handed.append([] if None in times else times)
    bursts = earliest(handed)
    if not bursts:
        return None, 0
    all_rises = rises(rises_path)
    pairs = [min(((rise - at) * 1000 for rise in all_rises), key=abs) for at in bursts if all_rises]
    pairs = [shift for shift in pairs if abs(shift) <= 100]
    return (int(f"{statistics.median(pairs):.0f}") if pairs else None), len(pairs)


def burst_offsets_ms(rise_times, made, before=0.05, after=0.6):
    """For each burst made at a time in `made`, its lamp's first rise from `before` s earlier to `after` s later:
    rise − made, ms; bursts with no rise there are left out."""
    offsets = []
    for at in made:
        rise = next((t for t in rise_times if at - before <= t <= at + after), None)
        if rise is not None:
            offsets.append((rise - at) * 1000)
    return offsets

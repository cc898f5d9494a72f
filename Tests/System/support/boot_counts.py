"""How many times each emulated machine booted in this run (support/raspberry_pi.py and support/kernel_vm.py add
theirs), for the run's summary: a new boot costs minutes, and the count shows when a module adds one."""
_counts = {}


def add(model):
    """One more boot of `model` (a name such as "raspi3b", "raspi4b icount", "x86_64")."""
    _counts[model] = _counts.get(model, 0) + 1


def by_model():
    """{model: boots} so far."""
    return dict(_counts)

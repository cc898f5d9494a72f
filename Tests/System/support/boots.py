"""How many times each emulated machine booted in this run (support/raspberry_pi.py, support/kernel_vm.py count
theirs), for the run's summary: a new boot costs minutes, and the count shows when a module adds one."""
_counts = {}


def count(model):
    """One more boot of `model` (a name such as "raspi3b", "raspi4b icount", "x86_64")."""
    _counts[model] = _counts.get(model, 0) + 1


def counted():
    """{model: boots} so far."""
    return dict(_counts)

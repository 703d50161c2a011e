"""How the benchmarks time: calibrated :mod:`timeit` repeats, rows that take turns, and processes that
time one turn when asked.

Every row is timed with :mod:`timeit` (the expression compiled into the loop, garbage collection
off): a few untimed warm-up calls, then enough calls per repeat that one repeat lasts
:attr:`Settings.seconds`, then many short repeats. A row reports (``us``) the fastest repeat but one
in :data:`OUTLIER_SHARE`, beside the true minimum and the median. Rows compared with each other take
turns (:attr:`Settings.rounds`); a row in another process (a process has one PrivateUse1 backend)
takes its turn through a :class:`TurnProcess`, whose other end is :func:`serve_turns`.

Noise on a shared machine only ever adds time, hence the fastest repeat; the one in
:data:`OUTLIER_SHARE` passed over, because on a virtual machine the clock now and then makes a repeat
look up to twice as fast as the code can run. Within a turn a row runs :attr:`Settings.repeat` repeats
in a row: for a while after a NumPy matmul its BLAS threads keep spinning, and a PyTorch CPU op that
starts then shares the two cores with them (measured: a CPU matmul's median doubled with 5 repeats a
turn, and stayed put with 15).
"""

import json
import statistics
import subprocess
import sys
import timeit
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    rounds: int  # rows compared with each other take this many turns
    repeat: int  # timed repeats per row and turn
    seconds: float  # the least time one repeat lasts; calls per repeat are calibrated to it
    warmup: int  # untimed calls before calibrating (the first compiled call compiles)


FULL = Settings(rounds=10, repeat=15, seconds=0.01, warmup=5)
QUICK = Settings(rounds=1, repeat=2, seconds=0.001, warmup=1)
# A row reports its fastest repeat but one in OUTLIER_SHARE: on a virtual machine the clock
# now and then makes a repeat look up to twice as fast as the code can run.
OUTLIER_SHARE = 20
CALIBRATION_TRIES = 3


def as_timer(work, bindings=None):
    """A :class:`timeit.Timer` of an expression string (with ``bindings``) or of a callable."""
    return timeit.Timer(work, globals=bindings) if isinstance(work, str) else timeit.Timer(work)


def calls_per_repeat(timer, seconds):
    """The smallest power of two of calls that lasts ``seconds``, in the fastest of a few tries.

    One try is not enough: a call that waits for the scheduler (another process on
    the core, or a CPU op's worker thread not yet running) would end the search at
    one call per repeat, and each repeat would then time one cold call.
    """
    number = 1
    while min(timer.timeit(number) for _ in range(CALIBRATION_TRIES)) < seconds:
        number *= 2
    return number


def timing_row(per_call_us, number):
    fastest_first = sorted(per_call_us)
    return {
        "us": round(fastest_first[len(fastest_first) // OUTLIER_SHARE], 3),
        "min_us": round(fastest_first[0], 3),
        "median_us": round(statistics.median(fastest_first), 3),
        "calls_per_repeat": number,
        "repeats": len(per_call_us),
        "unavailable": None,
    }


def unavailable_row(reason):
    return {"us": None, "min_us": None, "median_us": None, "calls_per_repeat": 0, "repeats": 0, "unavailable": reason}


def calibrate(works, settings):
    """Warm up each of ``works`` (name -> Timer); name -> calls per repeat."""
    numbers = {}
    for name, timer in works.items():
        timer.timeit(settings.warmup)
        numbers[name] = calls_per_repeat(timer, settings.seconds)
    return numbers


def one_turn(works, numbers, repeat):
    """``repeat`` repeats of each of ``works``, one work after the other; name -> µs per call of each repeat."""
    return {
        name: [timer.timeit(numbers[name]) / numbers[name] * 1e6 for _ in range(repeat)]
        for name, timer in works.items()
    }


def measure(works, settings):
    """Time each of ``works`` (name -> Timer), taking turns round by round; name -> timing row."""
    numbers = calibrate(works, settings)
    per_call_us = {name: [] for name in works}
    for _ in range(settings.rounds):
        for name, samples in one_turn(works, numbers, settings.repeat).items():
            per_call_us[name].extend(samples)
    return {name: timing_row(per_call_us[name], numbers[name]) for name in works}


def serve_turns(timers, settings, **started):
    """The other end of a :class:`TurnProcess`: calibrate ``timers``, print ``started`` and the calls per
    repeat as one JSON line, then time one turn (:func:`one_turn`) per line read, printing each."""
    numbers = calibrate(timers, settings)
    print(json.dumps({**started, "calls_per_repeat": numbers}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(one_turn(timers, numbers, settings.repeat)), flush=True)


class TurnProcess:
    """A process that runs :func:`serve_turns`, started by ``command``: it times one turn of its rows
    each time it is asked, so that its rows take turns with this process's and other processes'.

    ``started`` is its first line (what it reports before timing, and its calls per repeat).
    """

    def __init__(self, name, command, environment=None, cwd=None):
        self.name = name
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd, env=environment
        )
        self.started = self.read()

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: the process exited ({self.process.wait()})")
        return json.loads(line)

    def one_turn(self):
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self.read()

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)

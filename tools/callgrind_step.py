"""Instructions per compiled MLP training step (``make bench``'s ``mlp_works(device, backend="inductor")``),
counted by callgrind: deterministic where the machine's clock drifts by 10%.

    python tools/callgrind_step.py npy cpu        # per-step instructions of each device

Each device runs twice under ``valgrind --tool=callgrind``, with two numbers
of measured steps after the same warm-up; the difference of the two totals,
divided by the difference of the step counts, is the cost of one step, with
start-up and warm-up residue cancelled. Only the measured loop is counted:
a small C library, built here, toggles collection through callgrind's client
requests around it.

Valgrind 3.19 cannot run AVX-512, so PyTorch, MKL and Inductor's generated
C++ are kept to AVX2 (the environment below, and ``cpp.simdlen``). Inductor
compiles into a cache of its own, so that no kernel compiled for AVX-512 is
loaded from the shared one. Per function costs: ``callgrind_annotate
--inclusive=yes`` on the files left in the printed directory.
"""

import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = (10, 30)
WARM_UP = 5
MARKER_SOURCE = r"""
#include <valgrind/callgrind.h>
void collect_on(void) { CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; }
void collect_off(void) { CALLGRIND_TOGGLE_COLLECT; }
"""
AVX2_ONLY = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "TORCHINDUCTOR_CPP_MARCH": "x86-64-v3",
    "OMP_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
}


def run_steps(device, steps, marker_library):
    """Inside valgrind: warm up, then ``steps`` training steps with collection on."""
    import ctypes

    import torch

    torch._inductor.config.cpp.simdlen = 256  # AVX2 vectors in Inductor's C++
    torch.set_num_threads(1)
    sys.path.insert(0, ROOT)  # benchmarks/ is a folder of the checkout
    import backend_pkg
    from benchmarks.groups.mlp import mlp_works

    step = mlp_works(backend_pkg.DEVICE_NAME if device == "npy" else device, backend="inductor")["train_step"]
    for _ in range(WARM_UP):
        step()
    marker = ctypes.CDLL(marker_library)
    marker.collect_on()
    for _ in range(steps):
        step()
    marker.collect_off()


def build_marker(directory):
    source = os.path.join(directory, "marker.c")
    with open(source, "w") as file:
        file.write(MARKER_SOURCE)
    library = os.path.join(directory, "libmarker.so")
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


def counted(device, steps, directory, marker_library):
    """Instructions callgrind counted in ``steps`` measured steps on ``device``."""
    output = os.path.join(directory, f"callgrind.{device}.{steps}")
    environment = dict(os.environ, **AVX2_ONLY, TORCHINDUCTOR_CACHE_DIR=os.path.join(directory, "inductor"))
    environment["PYTHONPATH"] = os.pathsep.join([ROOT, os.path.join(ROOT, "tests"), environment.get("PYTHONPATH", "")])
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={output}",
        "--collect-atstart=no",
        sys.executable,
        __file__,
        "--child",
        device,
        str(steps),
        marker_library,
    ]
    subprocess.run(command, env=environment, cwd=ROOT, check=True, capture_output=True)
    with open(output) as file:
        return int(re.search(r"^totals: (\d+)", file.read(), re.M).group(1))


def main(devices):
    directory = tempfile.mkdtemp(prefix="callgrind_step.")
    marker_library = build_marker(directory)
    print("callgrind files in", directory)
    for device in devices:
        few, many = STEPS
        fewer = counted(device, few, directory, marker_library)
        more = counted(device, many, directory, marker_library)
        print(f"{device}: {(more - fewer) / (many - few):,.0f} instructions per step")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        run_steps(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main(sys.argv[1:])

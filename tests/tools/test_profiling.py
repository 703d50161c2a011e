"""benchmarks/profiling.py: an eager step split into npy kernels, guard and the rest."""

import torch

import backend_pkg  # noqa: F401
from benchmarks.profiling import step_parts


def test_step_parts_counts_what_each_phase_runs_and_restores_the_kernels():
    x = torch.randn(4, 3).to("npy").requires_grad_()
    state = {}
    phases = {"forward": lambda: state.update(loss=(x * 2).sum()), "backward": lambda: state["loss"].backward()}
    parts = step_parts(phases, steps=3, warmup=1)
    assert parts["forward"].kernel_calls == {"aten::mul.Tensor": 1, "aten::sum": 1}
    # The seed gradient is NpyTensor.backward's, no kernel: mul's backward is the first kernel.
    backward_calls = parts["backward"].kernel_calls
    assert "aten::mul.Tensor" in backward_calls and "aten::ones_like" not in backward_calls
    assert parts["backward"].guard_calls > 0 and not parts["forward"].fallback_calls
    for phase in parts.values():
        assert phase.total_us > 0 and all(us > 0 for us in phase.kernel_us.values())
    # The timed kernels were registered over the usual ones only while measuring.
    assert "profiling.py" not in torch._C._dispatch_dump("aten::mul.Tensor")

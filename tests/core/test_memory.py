"""Thousands of training steps on npy do not grow the process's memory."""

import subprocess
import sys
import textwrap

TRAINING = textwrap.dedent(
    """
    import resource, warnings
    import torch, backend_pkg

    warnings.simplefilter("ignore")

    def rss_mib():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).to("npy")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(32, 8).to("npy"), torch.randint(0, 4, (32,)).to("npy")
    for step in range(3000):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        if step == 300:
            warm = rss_mib()
    print(warm, rss_mib())
    """
)


def test_training_steps_release_their_memory():
    done = subprocess.run([sys.executable, "-c", TRAINING], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    warm, final = map(float, done.stdout.split())
    # 2,700 steps make ~100 MiB of tensors; a leak of even one per step would show.
    assert final - warm < 8, f"resident memory grew from {warm:.1f} MiB to {final:.1f} MiB"

"""What the training pages share (not a page itself).

The compiling pages (05, with ``backend="npy"``, and 06, with Inductor)
compile the same training step; the classifier pages (04 and 09) plot the
losses of the same training on npy and on CPU. sphinx-gallery runs a page
with its own folder (here gallery/deep_dives/) on ``sys.path``, and conf.py's
``ignore_pattern`` keeps files whose name starts with ``_`` from becoming pages.
"""

import matplotlib.pyplot as plt
import torch


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def plot_losses(cpu_losses, npy_losses):
    """The loss of every step on both devices: npy's dashed over CPU's, drawn wide and pale."""
    figure, axes = plt.subplots(figsize=(6, 3.5))
    axes.plot(cpu_losses, label="cpu", linewidth=3, alpha=0.5)
    axes.plot(npy_losses, label="npy", linestyle="--")
    axes.set_xlabel("step")
    axes.set_ylabel("cross-entropy loss")
    axes.set_yscale("log")
    axes.legend()
    figure.tight_layout()

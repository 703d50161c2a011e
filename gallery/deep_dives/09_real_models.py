"""
Real models on npy
==================

A program written for CUDA does not name its device: it asks
``torch.accelerator`` for the one the machine has, and uses convolutions,
batch norm, pooling, a ``DataLoader`` with pinned memory and checkpoints.
After ``import backend_pkg`` that machine has ``npy``, and such a program
runs there unchanged. This page trains a small convolutional network on
real handwritten digits and a character-level LSTM on real text, each on
``npy`` and on CPU from the same initial weights.
"""

# %%
# Choosing the device as CUDA programs do
# ---------------------------------------
# ``torch.accelerator.current_accelerator()`` returns the registered
# accelerator. The CPU fallback is turned off for this whole page
# (``BACKEND_PKG_STRICT=1``): an op without an npy kernel would stop the
# build instead of quietly running on CPU.

import codecs
import contextlib
import io
import os

import torch
import torch.nn.functional as F
from _training import plot_losses
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import backend_pkg

os.environ[backend_pkg.fallback.STRICT_ENV] = "1"

device = torch.accelerator.current_accelerator()
print("accelerator:", device, "-", torch.accelerator.device_count(), "device")
print("device name:", torch.npy.get_device_name())

# %%
# Handwritten digits
# ------------------
# scikit-learn ships 1,797 8x8 images of handwritten digits inside the
# package, so nothing is downloaded. A fixed permutation holds out 397 of
# them for testing.

digits = load_digits()
images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16
labels = torch.tensor(digits.target)
order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
train_set = TensorDataset(images[order[:1400]], labels[order[:1400]])
test_images, test_labels = images[order[1400:]], labels[order[1400:]]
print("train:", tuple(train_set.tensors[0].shape), "test:", tuple(test_images.shape))

# %%
# A convolutional network
# -----------------------
# Two blocks of convolution, batch norm, ReLU and max pooling, then a
# linear classifier: the shape of most image classifiers, at 8x8.


def make_classifier():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10),
    )


# %%
# The training loop is the one a CUDA program has: batches from a
# ``DataLoader`` with ``pin_memory=True``, moved with ``non_blocking=True``.


def train_classifier(device, epochs=6):
    model = make_classifier().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loader = DataLoader(train_set, batch_size=50, shuffle=False, pin_memory=True)
    losses = []
    for _ in range(epochs):
        model.train()
        for batch, target in loader:
            batch, target = batch.to(device, non_blocking=True), target.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(batch), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return model, losses


def accuracy(model, device):
    model.eval()
    with torch.no_grad():
        predicted = model(test_images.to(device)).argmax(dim=1)
    return (predicted.cpu() == test_labels).float().mean().item()


npy_classifier, npy_losses = train_classifier(device)
cpu_classifier, cpu_losses = train_classifier("cpu")
print(f"test accuracy on npy: {accuracy(npy_classifier, device):.3f}")
print(f"test accuracy on cpu: {accuracy(cpu_classifier, 'cpu'):.3f}")
for steps in (10, len(npy_losses)):
    difference = max(abs(a - b) for a, b in zip(npy_losses[:steps], cpu_losses[:steps]))
    print(f"largest loss difference over the first {steps} steps: {difference:.1e}")

# %%
# The two devices round float32 sums in different orders (NumPy's BLAS
# against oneDNN), so the first steps agree to about a millionth; momentum
# SGD at a high learning rate then carries those differences forward, and
# they grow. The curves stay together:

plot_losses(cpu_losses, npy_losses)

# %%
# A checkpoint
# ------------
# ``torch.save`` of the whole model and ``torch.load`` with its default,
# ``weights_only=True``, trusting only the model's own module classes, as
# on CPU. The loaded model is on ``npy`` again and predicts the same.

checkpoint = io.BytesIO()
torch.save(npy_classifier, checkpoint)
checkpoint.seek(0)
with torch.serialization.safe_globals([type(module) for module in npy_classifier.modules()]):
    restored = torch.load(checkpoint)
print("restored on", next(restored.parameters()).device, f"- test accuracy {accuracy(restored, device):.3f}")

# %%
# Text: a character-level LSTM
# ----------------------------
# The text is the Zen of Python, which every Python installation ships
# (ROT13-encoded, in the ``this`` module). A two-layer LSTM learns to
# predict each next character. PyTorch's ``aten::lstm`` is a composite: a
# loop over the time steps whose cell, on an accelerator, is the fused op
# ``_thnn_fused_lstm_cell``. ``npy`` registers a kernel for the whole
# sequence instead, its forward and its backprop through time in NumPy
# (``backend_pkg/ops/recurrent.py``), as cuDNN's path is on CUDA.

with contextlib.redirect_stdout(io.StringIO()):
    import this  # which prints the Zen on import

text = codecs.decode(this.s, "rot13")
alphabet = sorted(set(text))
encoded = torch.tensor([alphabet.index(character) for character in text])
print(f"{len(text)} characters, {len(alphabet)} distinct")


class CharLSTM(nn.Module):
    def __init__(self, vocabulary, width=64):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.lstm = nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.decoder = nn.Linear(width, vocabulary)

    def forward(self, characters, state=None):
        hidden, state = self.lstm(self.embedding(characters), state)
        return self.decoder(hidden), state


def text_batches(length=40, batch=16, steps=60):
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        starts = torch.randint(0, len(encoded) - length - 1, (batch,), generator=generator)
        windows = torch.stack([encoded[start : start + length + 1] for start in starts])
        yield windows[:, :-1], windows[:, 1:]


def train_language_model(device):
    torch.manual_seed(0)
    model = CharLSTM(len(alphabet)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for inputs, targets in text_batches():
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        logits, _ = model(inputs)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return model, losses


npy_lstm, npy_text_losses = train_language_model(device)
cpu_lstm, cpu_text_losses = train_language_model("cpu")
print(
    f"loss: {npy_text_losses[0]:.3f} -> {npy_text_losses[-1]:.3f} on npy, "
    f"{cpu_text_losses[0]:.3f} -> {cpu_text_losses[-1]:.3f} on cpu"
)

# %%
# The model continues a prompt, one most likely character at a time:


def continue_text(model, prompt, length=60):
    characters = torch.tensor([[alphabet.index(character) for character in prompt]], device=device)
    written = []
    with torch.no_grad():
        logits, state = model(characters)
        for _ in range(length):
            following = logits[:, -1].argmax(dim=-1, keepdim=True)
            written.append(alphabet[following.item()])
            logits, state = model(following, state)
    return prompt + "".join(written)


print(continue_text(npy_lstm, "Beautiful is "))

# %%
# Every op of both models, forward and backward, ran on an npy kernel: with
# the fallback forbidden, any other op would have raised. The pages built
# after this one in the same process may use the fallback again:

del os.environ[backend_pkg.fallback.STRICT_ENV]

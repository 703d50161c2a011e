"""The model zoo: small models of the families real programs train, each with its data and training step.

Every model is written here, in plain ``torch.nn``, the way a CUDA program
would write it. A :class:`Recipe` says how to build one, what data it eats
(CPU batches, made from fixed seeds) and what one training step does, so
the test can run the same recipe on CPU and on npy and compare.
Dropout is 0 throughout: the npy and CPU random streams differ, so a model
with live dropout cannot be compared step for step.
"""

import dataclasses
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, TensorDataset


@dataclasses.dataclass
class Recipe:
    build: Callable[[], nn.Module]
    batches: Callable[[torch.device], object]  # an iterable of CPU or device batches
    step: Callable  # (model, optimizers, batch on the device) -> loss
    optimizers: Callable  # model -> list of optimizers
    steps: int = 4


def _generator(seed):
    return torch.Generator().manual_seed(seed)


def _sgd(model):
    return [torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)]


def _adam(model):
    return [torch.optim.Adam(model.parameters(), lr=1e-3)]


def classification_step(model, optimizers, batch):
    """Cross-entropy, backward and the optimizer's step; the loss. The compile and autograd tests train with it too."""
    (optimizer,) = optimizers
    inputs, labels = batch
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    return loss


# --- a LeNet-style CNN -----------------------------------------------------------


class LeNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 2 * 2, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, images):
        return self.classifier(self.features(images))


def _images(channels, size, count, classes, seed):
    generator = _generator(seed)
    return (
        torch.randn(count, channels, size, size, generator=generator),
        torch.randint(0, classes, (count,), generator=generator),
    )


LENET = Recipe(
    build=LeNet,
    batches=lambda device: [_images(1, 16, 16, 10, seed) for seed in range(4)],
    step=classification_step,
    optimizers=_sgd,
)


# --- a small ResNet with batch norm, fed by a DataLoader --------------------------


class BasicBlock(nn.Module):
    def __init__(self, inputs, outputs, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.shortcut = nn.Identity()
        if stride != 1 or inputs != outputs:
            self.shortcut = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.Sequential(BasicBlock(width, width), BasicBlock(width, 2 * width, stride=2))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, classes))

    def forward(self, images):
        return self.head(self.blocks(self.stem(images)))


def _pinned_loader(device):
    """Batches as a CUDA program loads them: worker processes, pinned memory, ``non_blocking`` copies."""
    dataset = TensorDataset(*_images(3, 16, 32, 10, seed=7))
    loader = DataLoader(dataset, batch_size=8, num_workers=2, pin_memory=True, timeout=60)
    for images, labels in loader:
        yield images.to(device, non_blocking=True), labels.to(device, non_blocking=True)


RESNET = Recipe(build=SmallResNet, batches=_pinned_loader, step=classification_step, optimizers=_sgd)


# --- a 2-layer LSTM language model ---------------------------------------------


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocabulary=20, width=24):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.lstm = nn.LSTM(width, width, num_layers=2)
        self.decoder = nn.Linear(width, vocabulary)

    def forward(self, tokens, state=None):
        hidden, state = self.lstm(self.embedding(tokens), state)
        return self.decoder(hidden), state


def _text(vocabulary, length, batch, seed):
    """Token sequences, sequence-first: inputs and the next token to predict."""
    tokens = torch.randint(0, vocabulary, (length + 1, batch), generator=_generator(seed))
    return tokens[:-1], tokens[1:]


def _language_model_step(model, optimizers, batch):
    (optimizer,) = optimizers
    inputs, targets = batch
    optimizer.zero_grad()
    logits, _ = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss


LSTM_LM = Recipe(
    build=LSTMLanguageModel,
    batches=lambda device: [_text(20, 12, 4, seed) for seed in range(4)],
    step=_language_model_step,
    optimizers=_sgd,
)


# --- a bidirectional, batch_first GRU classifier over padded sequences ------------


class GRUClassifier(nn.Module):
    def __init__(self, features=6, width=16, classes=3):
        super().__init__()
        self.gru = nn.GRU(features, width, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * width, classes)

    def forward(self, sequences, lengths):
        packed = pack_padded_sequence(sequences, lengths, batch_first=True, enforce_sorted=False)
        _, last = self.gru(packed)
        return self.head(torch.cat([last[0], last[1]], dim=1))


def _padded_sequences(seed, batch=5, longest=7, features=6, classes=3):
    generator = _generator(seed)
    lengths = torch.randint(2, longest + 1, (batch,), generator=generator)
    sequences = torch.randn(batch, longest, features, generator=generator)
    sequences *= (torch.arange(longest)[None, :] < lengths[:, None])[..., None]
    return sequences, lengths, torch.randint(0, classes, (batch,), generator=generator)


def _sequence_classification_step(model, optimizers, batch):
    (optimizer,) = optimizers
    sequences, lengths, labels = batch
    optimizer.zero_grad()
    loss = F.cross_entropy(model(sequences, lengths.cpu()), labels)
    loss.backward()
    optimizer.step()
    return loss


GRU_CLASSIFIER = Recipe(
    build=GRUClassifier,
    batches=lambda device: [_padded_sequences(seed) for seed in range(4)],
    step=_sequence_classification_step,
    optimizers=_adam,
)


# --- a TransformerEncoder language model -------------------------------------------


class TransformerLanguageModel(nn.Module):
    def __init__(self, vocabulary=20, width=32, heads=4, layers=2, longest=16):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.position = nn.Parameter(torch.randn(longest, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.decoder = nn.Linear(width, vocabulary)

    def forward(self, tokens):
        length = tokens.shape[1]
        causal = nn.Transformer.generate_square_subsequent_mask(length, device=tokens.device)
        hidden = self.embedding(tokens) + self.position[:length]
        return self.decoder(self.encoder(hidden, mask=causal, is_causal=True)), None


# SGD, not Adam: attention's key bias has a gradient of exactly zero in theory
# (softmax ignores a constant per row), so what it gets is rounding noise,
# which Adam scales up to full steps of either sign, on either device.
TRANSFORMER_LM = Recipe(
    build=TransformerLanguageModel,
    batches=lambda device: [tuple(t.T for t in _text(20, 12, 4, seed)) for seed in range(4)],
    step=_language_model_step,
    optimizers=_sgd,
)


# --- a DCGAN-style generator and discriminator ------------------------------------


class DCGAN(nn.Module):
    """A generator of 1x16x16 images from 8 noise values, and its discriminator."""

    def __init__(self, noise=8, width=16):
        super().__init__()
        self.generator = nn.Sequential(
            nn.ConvTranspose2d(noise, 2 * width, 4, 1, 0, bias=False),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(),
            nn.ConvTranspose2d(2 * width, width, 4, 2, 1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.ConvTranspose2d(width, 1, 4, 2, 1, bias=False),
            nn.Tanh(),
        )
        self.discriminator = nn.Sequential(
            nn.Conv2d(1, width, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2),
            nn.Conv2d(width, 2 * width, 4, 2, 1, bias=False),
            nn.BatchNorm2d(2 * width),
            nn.LeakyReLU(0.2),
            nn.Conv2d(2 * width, 1, 4, 1, 0, bias=False),
            nn.Flatten(),
            nn.Sigmoid(),
        )


def _adversarial_batches(device, noise=8, batch=6):
    generator = _generator(11)
    return [
        (
            torch.rand(batch, 1, 16, 16, generator=generator) * 2 - 1,
            torch.randn(batch, noise, 1, 1, generator=generator),
        )
        for _ in range(4)
    ]


def _gan_optimizers(model):
    return [
        torch.optim.Adam(part.parameters(), lr=2e-4, betas=(0.5, 0.999))
        for part in (model.discriminator, model.generator)
    ]


def _gan_step(model, optimizers, batch):
    """One discriminator step on real and generated images, then one generator step: the generator's loss."""
    discriminator_optimizer, generator_optimizer = optimizers
    real, noise = batch
    real_label = torch.ones(real.shape[0], 1, device=real.device)
    fake_label = torch.zeros_like(real_label)
    fake = model.generator(noise)

    discriminator_optimizer.zero_grad()
    discriminator_loss = F.binary_cross_entropy(model.discriminator(real), real_label) + F.binary_cross_entropy(
        model.discriminator(fake.detach()), fake_label
    )
    discriminator_loss.backward()
    discriminator_optimizer.step()

    generator_optimizer.zero_grad()
    generator_loss = F.binary_cross_entropy(model.discriminator(fake), real_label)
    generator_loss.backward()
    generator_optimizer.step()
    return generator_loss


GAN = Recipe(build=DCGAN, batches=_adversarial_batches, step=_gan_step, optimizers=_gan_optimizers)


RECIPES = {
    "lenet": LENET,
    "resnet": RESNET,
    "lstm_language_model": LSTM_LM,
    "gru_classifier": GRU_CLASSIFIER,
    "transformer_language_model": TRANSFORMER_LM,
    "dcgan": GAN,
}

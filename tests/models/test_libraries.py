"""The libraries people train with, on npy beside CPU: transformers' GPT-2 and BERT, Lightning.

Tiny configs, random init, nothing downloaded; every test runs under strict
mode, so an op reaching the CPU fallback fails it.
"""

import logging
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # random init from a config: nothing to fetch
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402

import backend_pkg  # noqa: E402, F401

ROOT = Path(__file__).resolve().parents[2]
# The models of the Libraries on npy page, from the gallery helper the page quotes: one definition for both.
sys.path.insert(0, str(ROOT / "gallery" / "deep_dives"))
from _libraries import VOCAB, gpt2, lightning_fit  # noqa: E402

pytestmark = pytest.mark.usefixtures("strict")
transformers.logging.set_verbosity_error()
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)


def tokens(device):
    return torch.randint(0, VOCAB - 1, (2, 8), generator=torch.Generator().manual_seed(1)).to(device)


def train_gpt2(device, steps=3):
    model = gpt2(device)
    # SGD, not Adam: Adam scales the key bias's gradient, zero up to rounding, up to a full step.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    ids = tokens(device)
    losses = []
    for _ in range(steps):
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return model, losses


def test_gpt2_keeps_its_tied_embedding_on_npy():
    # Holds once Module.to("npy") keeps parameters (as with swap_module_params_on_conversion).
    model = gpt2("npy")
    assert model.lm_head.weight is model.transformer.wte.weight


def test_gpt2_trains_on_npy_like_cpu():
    npy_model, npy_losses = train_gpt2("npy")
    cpu_model, cpu_losses = train_gpt2("cpu")
    assert cpu_losses[-1] < cpu_losses[0]
    torch.testing.assert_close(npy_losses, cpu_losses, rtol=1e-5, atol=1e-5)
    for (name, got), (_, want) in zip(npy_model.named_parameters(), cpu_model.named_parameters()):
        assert got.device.type == "npy", name
        torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("beams", [1, 3], ids=["greedy", "beam search"])
def test_gpt2_generates_on_npy_what_it_generates_on_cpu(beams):
    prompts = {device: tokens(device)[:, :4] for device in ("cpu", "npy")}
    generated = {
        device: gpt2(device)
        .eval()
        .generate(
            prompts[device],
            max_new_tokens=6,
            num_beams=beams,
            do_sample=False,
            pad_token_id=0,
            attention_mask=torch.ones_like(prompts[device]),
        )
        .cpu()
        for device in ("cpu", "npy")
    }
    assert generated["cpu"].shape == (2, 10)
    assert torch.equal(generated["npy"], generated["cpu"])


def test_gpt2_samples_on_npy_with_top_k_and_top_p():
    """Sampling draws from npy's own generator, so the tokens differ from CPU's; it runs natively
    (multinomial, and sort for top-p) and a seed repeats it."""
    model = gpt2("npy").eval()
    prompt = tokens("npy")[:, :4]

    def sample():
        torch.manual_seed(0)
        return model.generate(
            prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=6,
            do_sample=True,
            top_k=8,
            top_p=0.9,
            temperature=0.8,
            pad_token_id=0,
        ).cpu()

    first = sample()
    assert first.shape == (2, 10) and first.dtype == torch.int64
    assert torch.equal(first, sample())


# BERT at the size of ``gpt2()``'s GPT-2 (2 layers of 2 heads, width 32, 32 positions), in BertConfig's names.
TINY_TRANSFORMER = dict(
    num_hidden_layers=2, num_attention_heads=2, hidden_size=32, max_position_embeddings=32, vocab_size=VOCAB
)


def test_bert_forward_and_backward_on_npy_like_cpu():
    def run(device):
        torch.manual_seed(0)
        config = transformers.BertConfig(
            **TINY_TRANSFORMER, intermediate_size=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
        )
        model = transformers.BertForMaskedLM(config).to(device)
        mask = torch.ones(2, 8, dtype=torch.int64)
        mask[1, 6:] = 0  # padding: the attention mask reaches the kernels
        loss = model(input_ids=tokens(device), attention_mask=mask.to(device), labels=tokens(device)).loss
        loss.backward()
        return loss.item(), {name: p.grad.cpu() for name, p in model.named_parameters() if p.grad is not None}

    (npy_loss, npy_grads), (cpu_loss, cpu_grads) = run("npy"), run("cpu")
    torch.testing.assert_close(npy_loss, cpu_loss)
    assert npy_grads.keys() == cpu_grads.keys()
    for name in cpu_grads:
        torch.testing.assert_close(npy_grads[name], cpu_grads[name], rtol=1e-4, atol=1e-5, msg=name)


# --- Lightning ------------------------------------------------------------------------------


def test_lightning_trains_on_npy_like_cpu():
    import backend_pkg.lightning  # noqa: F401  registers "npy"

    npy_trainer, npy_weights = lightning_fit(accelerator="npy", strategy="npy", devices=1)
    cpu_trainer, cpu_weights = lightning_fit(accelerator="cpu", devices=1)
    assert npy_trainer.strategy.root_device == torch.device("npy", 0)
    assert cpu_trainer.strategy.root_device == torch.device("cpu")
    for got, want in zip(npy_weights, cpu_weights):
        torch.testing.assert_close(got, want)
    _, initial_weights = lightning_fit(epochs=0, accelerator="cpu")
    assert any(not torch.equal(got, want) for got, want in zip(cpu_weights, initial_weights))  # it trained


def test_lightning_npy_accelerator_refuses_the_cpu_strategy_lightning_builds_for_it():
    from lightning.pytorch.utilities.exceptions import MisconfigurationException

    import backend_pkg.lightning  # noqa: F401

    with pytest.raises(MisconfigurationException, match="Pass strategy='npy' too"):
        lightning_fit(accelerator="npy", devices=1)


def test_lightning_auto_accelerator_trains_on_cpu():
    trainer, _ = lightning_fit(accelerator="auto")
    assert trainer.strategy.root_device == torch.device("cpu")


def test_importing_backend_pkg_does_not_import_lightning():
    import subprocess
    import sys

    code = "import sys, backend_pkg; print('lightning' in sys.modules, 'transformers' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]

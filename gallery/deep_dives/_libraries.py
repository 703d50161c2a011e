"""The models the Libraries on npy page trains (not a page itself).

``tests/models/test_libraries.py`` trains the same ones, so what the page
shows is what the tests check: the page quotes this file with
``.. literalinclude::`` and imports it (sphinx-gallery runs a page with its
own folder on ``sys.path``), the tests put this folder on ``sys.path``.
"""

import warnings

import lightning.pytorch as pl
import torch
import transformers

VOCAB = 64


def gpt2(device):
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2,
        n_head=2,
        n_embd=32,
        vocab_size=VOCAB,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=VOCAB - 1,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,  # dropout draws from each device's own generator
    )
    return transformers.GPT2LMHeadModel(config).to(device)


class Regression(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))

    def training_step(self, batch, index):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def lightning_fit(epochs=2, **trainer_arguments):
    """Fits a fresh ``Regression`` (seed 0) for ``epochs`` on the same 32 samples; returns the trainer and
    the weights, on CPU."""
    x = torch.randn(32, 4, generator=torch.Generator().manual_seed(0))
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)
    torch.manual_seed(0)
    module = Regression()
    trainer = pl.Trainer(
        max_epochs=epochs,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        **trainer_arguments,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*does not have many workers.*")  # 32 samples in the main process
        trainer.fit(module, data)
    return trainer, [p.detach().cpu() for p in module.parameters()]

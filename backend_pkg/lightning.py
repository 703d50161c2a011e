"""PyTorch Lightning on npy: an accelerator and a single-device strategy, both registered as ``"npy"``.

Importing this module (never ``import backend_pkg`` alone, so Lightning stays
optional) registers them with Lightning's two registries::

    import backend_pkg.lightning
    trainer = lightning.pytorch.Trainer(accelerator="npy", strategy="npy", devices=1)

Both names are needed. For an accelerator it does not know, Lightning 2.6's
``_AcceleratorConnector._choose_strategy`` builds ``SingleDeviceStrategy(device="cpu")``
(only "cuda", "gpu", "mps" and XLA get their device), and no public hook changes
that choice: an accelerator's name is only compared with those, and the first of its
``get_parallel_devices`` is used only for CUDA and MPS (the Libraries page prints the
branch). With ``accelerator="npy"`` alone the model would train on CPU. So
:class:`NpyAccelerator` refuses any device but npy, naming the fix, and
:class:`NpyStrategy` is the single-device strategy on ``npy:0``. Passing the
strategy object, ``Trainer(strategy=NpyStrategy())``, also works: a strategy
that carries an accelerator sets the Trainer's.

``accelerator="auto"`` never picks npy: Lightning tries XLA, MPS and CUDA,
then CPU, without asking ``torch.accelerator``.
"""

import torch
from lightning.pytorch.accelerators import Accelerator, AcceleratorRegistry
from lightning.pytorch.strategies import SingleDeviceStrategy, StrategyRegistry
from lightning.pytorch.utilities.exceptions import MisconfigurationException

from .names import DEVICE_NAME


class NpyAccelerator(Accelerator):
    """The npy device as a Lightning accelerator: one device, ``npy:0``."""

    def setup_device(self, device):
        if torch.device(device).type != DEVICE_NAME:
            raise MisconfigurationException(
                f"The {DEVICE_NAME} accelerator got the device {device}: Lightning builds a CPU strategy for an "
                f"accelerator it does not know. Pass strategy={DEVICE_NAME!r} too (import backend_pkg.lightning "
                "registers it), or strategy=backend_pkg.lightning.NpyStrategy()."
            )

    def teardown(self):
        pass

    def get_device_stats(self, device):
        return {}

    @staticmethod
    def parse_devices(devices):
        count = len(devices) if isinstance(devices, (list, tuple)) else int(devices)  # [0], 1 or "1"
        if count != 1:
            raise MisconfigurationException(f"The {DEVICE_NAME} device is one device: devices=1, got {devices!r}")
        return count

    @staticmethod
    def get_parallel_devices(devices):
        return [torch.device(DEVICE_NAME, 0)]

    @staticmethod
    def auto_device_count():
        return 1

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def name():
        return DEVICE_NAME

    @classmethod
    def register_accelerators(cls, accelerator_registry):
        accelerator_registry.register(cls.name(), cls, description=cls.__name__)


class NpyStrategy(SingleDeviceStrategy):
    """Lightning's single-device strategy with the model on ``npy:0`` and the npy accelerator."""

    strategy_name = DEVICE_NAME

    def __init__(self, accelerator=None, checkpoint_io=None, precision_plugin=None):
        super().__init__(
            device=torch.device(DEVICE_NAME, 0),
            accelerator=accelerator if accelerator is not None else NpyAccelerator(),
            checkpoint_io=checkpoint_io,
            precision_plugin=precision_plugin,
        )

    @classmethod
    def register_strategies(cls, strategy_registry):
        strategy_registry.register(cls.strategy_name, cls, description=cls.__name__)


NpyAccelerator.register_accelerators(AcceleratorRegistry)
NpyStrategy.register_strategies(StrategyRegistry)

"""Device names ("cpu", "cuda", "cuda:1") parsed into PyTorch-style device objects."""

from __future__ import annotations


class Device:
    """Where a tensor's array lives: ``device(type='cpu')`` or ``device(type='cuda', index=0)``."""

    __slots__ = ("index", "type")

    def __init__(self, type: str | Device, index: int | None = None) -> None:
        if isinstance(type, Device):
            type, index = type.type, type.index if index is None else index
        elif ":" in type:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}"
                )
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}"
            )
        if type == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be -1 or zero, got {index}")
        self.type = type
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        if not isinstance(other, Device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = Device("cpu")


_DEFAULT = [CPU]  # where creation functions put tensors when no device is given


def set_default_device(device: str | Device | None) -> None:
    """PyTorch's ``torch.set_default_device``: the device of new tensors (None: back to the CPU)."""
    _DEFAULT[0] = CPU if device is None else as_device(device)


def get_default_device() -> Device:
    return _DEFAULT[0]


def as_device(device: str | Device | None) -> Device:
    """Normalise a user's device argument; ``None`` means the default device (the CPU unless
    ``set_default_device`` changed it)."""
    if device is None:
        return _DEFAULT[0]
    if isinstance(device, Device):
        return device
    if isinstance(device, int):
        return Device("cuda", device)
    return Device(device)

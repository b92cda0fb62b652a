"""``torch.jit.annotations``: the typing names TorchScript code imports from it."""

from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: UP035  (the names code imports)

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union"]

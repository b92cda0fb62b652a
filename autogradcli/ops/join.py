"""(placeholder, being written)"""

from typing import Any

TENSOR_METHODS: dict[str, Any] = {}
__all__: list[str] = []

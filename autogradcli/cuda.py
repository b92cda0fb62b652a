"""``autogradcli.cuda``: GPU queries that work (and say no) on machines without one."""

from .backend.cuda import device_count, is_available, synchronize

__all__ = ["device_count", "is_available", "synchronize"]

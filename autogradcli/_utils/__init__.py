"""Internal low-level helpers (standard library only) that every layer may use: atomic file
writes and hook handles. The public, PyTorch-shaped ``autogradcli.utils`` namespace is separate."""

"""Internal low-level helpers (standard library only) that every layer may use: atomic file
writes, hook handles, lazily loaded package attributes and errors located in the user's code. The public, PyTorch-shaped ``autogradcli.utils`` namespace is separate."""

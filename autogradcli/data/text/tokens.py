"""Tokens and the vocabulary of ``dataset: text``.

``char``: every character is a token. ``word``: a token is a run of letters, digits and
underscores (``\\w+``), a single punctuation or symbol character, or a newline; other
whitespace only separates tokens. The vocabulary lists the special tokens first, then the
tokens seen in the training text, most frequent first (ties in code-point order)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["PAD", "UNK", "build_vocab", "detokenize", "encode", "tokenize"]

UNK = "<unk>"  # any token not in the vocabulary
PAD = "<pad>"  # fills a classified text up to its length (id 0 when present)
_WORD = re.compile(r"\w+|[^\w\s]|\n")


def tokenize(text: str, tokens: str, lowercase: bool = False) -> Sequence[str]:
    """``text`` as a sequence of ``char`` or ``word`` tokens (see the module's rule): for
    ``char`` the string itself (a sequence of characters, one byte each for ASCII text, not a
    list of objects); for ``word`` a list."""
    if lowercase:
        text = text.lower()
    if tokens == "char":
        return text
    return _WORD.findall(text)


def detokenize(pieces: Sequence[str], tokens: str) -> str:
    """Tokens back to text: chars joined as they are; words joined by spaces, except around a
    newline."""
    if tokens == "char":
        return "".join(pieces)
    out: list[str] = []
    for piece in pieces:
        if out and piece != "\n" and out[-1] != "\n":
            out.append(" ")
        out.append(piece)
    return "".join(out)


def build_vocab(
    counts: Counter, specials: Sequence[str], max_vocab: int | None = None
) -> list[str]:
    """The vocabulary: ``specials``, then the counted tokens by falling count and code point,
    at most ``max_vocab`` entries in all (specials included)."""
    ranked = sorted((t for t in counts if t not in specials), key=lambda t: (-counts[t], t))
    vocab = list(specials) + ranked
    return vocab if max_vocab is None else vocab[: max(max_vocab, len(specials))]


def encode(pieces: Iterable[str], vocab: Sequence[str]) -> np.ndarray:
    """The int64 ids of ``pieces`` in ``vocab``; unknown tokens get ``<unk>``'s id."""
    index = {t: i for i, t in enumerate(vocab)}
    unk = index[UNK]
    return np.fromiter((index.get(p, unk) for p in pieces), dtype=np.int64)

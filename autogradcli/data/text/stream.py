"""A text of any size as token ids without holding it: tokenized chunk by chunk into ids written
to a memory-mapped file (``idfile``), the counts of chosen blocks, and the re-coding of those ids
into a vocabulary's ids, all in bounded steps.

``read_ids`` gives each distinct token an id in order of first appearance (the "seen" ids, not
yet a vocabulary: that is fitted later, on the training blocks only); ``block_counts`` counts
them over some blocks and ``recode`` maps them to a vocabulary's ids in its compact dtype."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from .idfile import IdFile, compact_dtype
from .tokens import UNK, tokenize

__all__ = ["STEP_TOKENS", "block_counts", "read_ids", "recode"]

STEP_TOKENS = 1 << 20  # ids counted or re-coded per step
_LAST_SPACE = re.compile(r"\s\S*\Z")


def _cut_at_spaces(texts: Iterable[str]) -> Iterator[str]:
    """``texts`` re-cut after their last whitespace character, so no word (nor the context that
    lowercasing a Greek sigma reads) spans two pieces; a run without whitespace is carried on
    until one comes."""
    carry = ""
    for text in texts:
        text = carry + text
        found = _LAST_SPACE.search(text)
        if found is None:
            carry = text
            continue
        yield text[: found.start() + 1]
        carry = text[found.start() + 1 :]
    if carry:
        yield carry


def _char_ids(text: str, seen: dict[str, int]) -> np.ndarray:
    """The seen-ids of ``text``'s characters (new characters get the next ids)."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    distinct, inverse = np.unique(points, return_inverse=True)
    lut = np.fromiter((seen.setdefault(chr(c), len(seen)) for c in distinct.tolist()), np.uint32)
    return lut[inverse.reshape(-1)]


def _word_ids(words: Sequence[str], seen: dict[str, int]) -> np.ndarray:
    """The seen-ids of ``words`` (new words get the next ids)."""
    return np.fromiter((seen.setdefault(w, len(seen)) for w in words), np.uint32, len(words))


def read_ids(texts: Iterable[str], tokens: str, lowercase: bool) -> tuple[IdFile, list[str]]:
    """The tokens of the text pieces ``texts`` (``tokenize``'s rule) as uint32 seen-ids in a
    file, and the token of each seen-id."""
    seen: dict[str, int] = {}
    out = IdFile(np.dtype(np.uint32))
    if tokens == "word" or lowercase:
        texts = _cut_at_spaces(texts)
    for text in texts:
        pieces = tokenize(text, tokens, lowercase)
        if tokens == "char":
            out.write(_char_ids(str(pieces), seen))
        else:
            out.write(_word_ids(pieces, seen))
    return out.finish(), list(seen)


def block_counts(ids: IdFile, size: int, blocks: Iterable[int], n: int) -> np.ndarray:
    """How often each of the ``n`` seen-ids occurs in the blocks ``blocks`` of ``size`` ids."""
    chosen = np.zeros(ids.count // size, dtype=bool)
    chosen[np.fromiter((int(b) for b in blocks), np.int64)] = True
    counts = np.zeros(n, dtype=np.int64)
    step = max(1, STEP_TOKENS // size) * size  # whole blocks per step
    for first, part in ids.steps(step):
        whole = part[: part.shape[0] // size * size].reshape(-1, size)
        keep = chosen[first // size : first // size + whole.shape[0]]
        counts += np.bincount(whole[keep].reshape(-1), minlength=n)
    return counts


def recode(ids: IdFile, seen: Sequence[str], vocab: Sequence[str]) -> IdFile:
    """Seen-ids ``ids`` (tokens ``seen``) as ids in ``vocab`` (``<unk>`` for the tokens it
    lacks), in a file of the smallest dtype that holds them."""
    index = {t: i for i, t in enumerate(vocab)}
    lut = np.fromiter((index.get(t, index[UNK]) for t in seen), np.int64, len(seen))
    out = IdFile(compact_dtype(len(vocab)))
    for _, part in ids.steps(STEP_TOKENS):
        out.write(lut[part])
    return out.finish()

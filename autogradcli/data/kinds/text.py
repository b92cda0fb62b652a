"""``dataset: text``: a plain text file, a folder of ``.txt`` files, or a CSV/TSV table's text
column, as tokens (``char`` or ``word``) with a vocabulary fitted on the training split.

``task: next_token`` (a language model): the token sequence is cut into non-overlapping blocks
of ``block_size + 1`` tokens, and a block is the unit the run's splitter shuffles, so no training
window shares a token with a validation or test window. Block ``r`` gives the sample
``x = ids[i:i+T]``, ``y = ids[i+1:i+T+1]`` (``i = r * (T + 1)``): every position is a target,
and both are views of one memory-mapped array of ids encoded once, in the smallest unsigned
dtype the vocabulary fits (int64 per batch). The text is read in bounded chunks and never held
whole (see ``text.stream``). A trailing part shorter than a block is not used.

``task: classify``: one text per row of a table with a label column; the input is the text's
token ids cut to their first ``length`` or padded in front (``<pad>``, id 0) up to it, the
target the label's index among the class names seen in the training rows (sorted).
"""

from __future__ import annotations

import copy
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from ..text.datasets import BlockWindows, PaddedTexts
from ..text.files import TEXT_SUFFIXES, iter_utf8, read_utf8, text_files
from ..text.idfile import IdFile
from ..text.stream import block_counts, read_ids, recode
from ..text.table import MAX_PROBLEMS, read_table
from ..text.tokens import PAD, UNK, build_vocab, encode, tokenize
from .base import DataError, DataKind, Problem, Source

__all__ = ["TASKS", "TOKENS", "TextKind", "TextSource"]

TASKS = ("next_token", "classify")
TOKENS = ("char", "word")
_TABLES = (".csv", ".tsv")


class TextSource(Source):
    """What ``TextKind.read`` found: for ``next_token`` the token sequence as memory-mapped
    seen-ids (``seen_ids``, tokens ``seen``: see ``text.stream``) cut into blocks; for
    ``classify`` each row's tokens, label (None without a label column) and line in ``file``."""

    def __init__(
        self,
        file: str,
        tokens: str,
        seen_ids: IdFile | None = None,
        seen: list[str] | None = None,
        block_size: int = 0,
        rows: list[Sequence[str]] | None = None,
        labels: list[str] | None = None,
        lines: list[int] | None = None,
    ) -> None:
        self.file, self.tokens, self.block_size = file, tokens, block_size
        self.seen_ids, self.seen = seen_ids, seen
        self.rows, self.labels, self.lines = rows, labels, lines
        self._encoded: dict[str, Any] = {}  # shared by reblocked copies: the same ids

    def __len__(self) -> int:
        if self.seen_ids is not None:
            return self.seen_ids.count // (self.block_size + 1)
        return len(self.rows or ())

    def _tokens(self, ids: np.ndarray) -> Sequence[str]:
        """Seen-ids back to tokens: a string of chars, or a list of words."""
        assert self.seen is not None
        pieces = [self.seen[int(i)] for i in ids]
        return "".join(pieces) if self.tokens == "char" else pieces

    @property
    def pieces(self) -> Sequence[str] | None:
        """Every token of a next_token text (the whole text in memory: for small texts and
        tests); None for classify."""
        return None if self.seen_ids is None else self._tokens(self.seen_ids.array)

    def block(self, r: int) -> Sequence[str]:
        """The ``block_size + 1`` tokens of block ``r``."""
        assert self.seen_ids is not None
        size = self.block_size + 1
        return self._tokens(self.seen_ids.array[r * size : (r + 1) * size])

    def counts(self, blocks: Sequence[int]) -> Counter:
        """How often each token occurs in the blocks ``blocks``."""
        assert self.seen_ids is not None and self.seen is not None
        counts = block_counts(self.seen_ids, self.block_size + 1, blocks, len(self.seen))
        return Counter({self.seen[i]: int(counts[i]) for i in np.flatnonzero(counts)})

    def reblocked(self, block_size: int) -> TextSource:
        """This text cut into blocks of ``block_size + 1`` tokens (the same tokens and ids)."""
        if block_size == self.block_size:
            return self
        other = copy.copy(self)
        other.block_size = block_size
        return other

    def ids(self, vocab: Sequence[str]) -> np.ndarray:
        """The whole token sequence as ids in ``vocab``, memory-mapped in the smallest unsigned
        dtype that holds them, encoded once per vocabulary (every sample is a view of it)."""
        assert self.seen_ids is not None and self.seen is not None
        key = tuple(vocab)
        if self._encoded.get("vocab") != key:
            self._encoded.update(vocab=key, ids=recode(self.seen_ids, self.seen, vocab))
        return self._encoded["ids"].array


class TextKind(DataKind):
    """``dataset: text``: see the module's docstring for the two tasks."""

    name: ClassVar[str] = "text"
    path_settings: ClassVar[tuple[str, ...]] = ("path",)

    def __init__(
        self,
        path: str,
        task: str = "next_token",
        tokens: str = "char",
        block_size: int = 64,
        length: int = 128,
        text_column: str = "text",
        label_column: str = "label",
        lowercase: bool = False,
        max_vocab: int | None = None,
    ) -> None:
        wrong = []
        if task not in TASKS:
            wrong.append(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        if tokens not in TOKENS:
            wrong.append(f"tokens must be one of {', '.join(TOKENS)}, got {tokens!r}")
        for key, value in (("block_size", block_size), ("length", length)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                wrong.append(f"{key} must be a positive integer, got {value!r}")
        if max_vocab is not None and (not isinstance(max_vocab, int) or max_vocab < 3):
            wrong.append(f"max_vocab must be null or an integer >= 3, got {max_vocab!r}")
        if wrong:
            raise ValueError("; ".join(wrong))
        self.path, self.task, self.tokens = os.fspath(path), task, tokens
        self.block_size, self.length = block_size, length
        self.text_column, self.label_column = text_column, label_column
        self.lowercase, self.max_vocab = lowercase, max_vocab

    def read(self, path: str | None = None) -> TextSource:
        """The configured text (``path`` None) or the file or folder ``path``, tokenized."""
        where = os.fspath(path) if path is not None else self.path
        if self.task == "classify":
            return self._read_rows(where, need_labels=path is None)
        problems: list[Problem] = []
        seen_ids, seen = read_ids(self._texts(where, problems), self.tokens, self.lowercase)
        if problems:
            raise DataError(problems[:MAX_PROBLEMS], max(0, len(problems) - MAX_PROBLEMS))
        count = seen_ids.count
        if count < self.block_size + 1:
            why = (
                f"the text has {count} {self.tokens} tokens, fewer than block_size + 1 = "
                f"{self.block_size + 1} (a sample is block_size inputs and their next tokens): "
                f"lower block_size or give more text"
            )
            raise DataError([Problem(where, why)])
        return TextSource(where, self.tokens, seen_ids, seen, block_size=self.block_size)

    def _texts(self, where: str, problems: list[Problem]) -> Iterator[str]:
        """All the text at ``where``, in bounded pieces: a file, a folder's text files in path
        order (a newline between files), or a table's text column (one row per line). A file's
        problems are added to ``problems`` and the next file read; no text at all is an error."""
        if os.path.isdir(where):
            files = text_files(where)
            if not files:
                suffixes = ", ".join(f"*{s}" for s in TEXT_SUFFIXES)
                raise DataError([Problem(where, f"the folder has no text files ({suffixes})")])
        elif os.path.isfile(where):
            files = [where]
        else:
            raise DataError([Problem(where, "no such file or folder")])
        wrote, ends_line = False, None  # ends_line: None before the first file
        for file in files:
            last = ""
            try:
                if file.lower().endswith(_TABLES):
                    table = "\n".join(read_table(file, self.text_column, "", False).texts)
                    parts: Iterable[str] = [table] if table else []
                else:
                    parts = iter_utf8(file)
                for part in parts:
                    if not last and ends_line is False:
                        yield "\n"
                    yield part
                    wrote, last = True, part
            except DataError as err:
                problems.extend(err.problems)
            ends_line = last.endswith("\n")
        if not wrote and not problems:
            what = "the file is empty" if len(files) == 1 else "every text file in it is empty"
            raise DataError([Problem(where, what)])

    def _read_rows(self, where: str, need_labels: bool) -> TextSource:
        """One row per text of the table ``where`` (or per line of a ``.txt`` file, unlabelled)."""
        if os.path.isdir(where):
            why = "task: classify reads a CSV or TSV file with a text and a label column"
            raise DataError([Problem(where, f"is a folder; {why}")])
        if not os.path.exists(where):
            raise DataError([Problem(where, "no such file")])
        if where.lower().endswith(TEXT_SUFFIXES) and not need_labels:
            lines = read_utf8(where).split("\n")
            kept = [(i + 1, t) for i, t in enumerate(lines) if t.strip()]
            if not kept:
                raise DataError([Problem(where, "the file has no text lines")])
            rows = [tokenize(t, self.tokens, self.lowercase) for _, t in kept]
            return TextSource(where, self.tokens, rows=rows, lines=[i for i, _ in kept])
        table = read_table(where, self.text_column, self.label_column, need_labels)
        rows = [tokenize(t, self.tokens, self.lowercase) for t in table.texts]
        return TextSource(where, self.tokens, rows=rows, labels=table.labels, lines=table.lines)

    def fit(self, source: Source, train: Sequence[int]) -> dict[str, Any]:
        """The vocabulary of the training rows (blocks or texts) and, for ``classify``, the
        class names of their labels."""
        assert isinstance(source, TextSource)
        counts: Counter = Counter()
        state: dict[str, Any] = {"task": self.task, "tokens": self.tokens}
        state["lowercase"] = self.lowercase
        if self.task == "next_token":
            counts = source.counts(train)
            state["block_size"] = self.block_size
            state["vocab"] = build_vocab(counts, [UNK], self.max_vocab)
            return state
        assert source.rows is not None and source.labels is not None
        for r in train:
            counts.update(source.rows[int(r)])
        classes = sorted({source.labels[int(r)] for r in train})
        if len(classes) < 2:
            why = f"the training rows have {len(classes)} label(s) {classes}: need at least 2"
            raise DataError([Problem(source.file, why, column=self.label_column)])
        state["length"] = self.length
        state["vocab"] = build_vocab(counts, [PAD, UNK], self.max_vocab)
        state["classes"] = classes
        return state

    def samples(
        self,
        source: Source,
        state: dict[str, Any],
        rows: Sequence[int] | None = None,
        train: bool = False,
    ) -> Any:
        """(ids, next ids) windows of the blocks ``rows``, or (padded ids, class) pairs."""
        if state["task"] == "next_token":
            source = self._as_trained(source, state)
            rows = range(len(source)) if rows is None else rows
            return BlockWindows(source.ids(state["vocab"]), rows, state["block_size"])
        assert isinstance(source, TextSource)
        rows = range(len(source)) if rows is None else rows
        labels = self._class_indices(source, state, rows)
        return PaddedTexts(self._padded(source, state, rows), labels)

    def inputs(self, source: Source, state: dict[str, Any]) -> Any:
        """Every row's padded ids (classify). A language model has no per-row prediction to
        write: its text is refused, pointing at ``generate`` and ``eval --data``."""
        assert isinstance(source, TextSource)
        if state["task"] == "next_token":
            why = (
                "agrad predict writes one prediction per row of a task: classify run; for a "
                "language model (task: next_token) use `agrad generate RUN --prompt TEXT` to "
                "sample text, or `agrad eval RUN --data FILE` for its loss, accuracy and "
                "perplexity on a text"
            )
            raise DataError([Problem(source.file, why)])
        return PaddedTexts(self._padded(source, state, range(len(source))))

    @staticmethod
    def _as_trained(source: Source, state: dict[str, Any]) -> TextSource:
        """``source`` cut into the run's blocks; a text read with other tokens than the run's
        vocabulary, or too short for one block, is a ``DataError``."""
        assert isinstance(source, TextSource)
        if source.tokens != state["tokens"]:
            why = (
                f"read as {source.tokens} tokens, but the run's vocabulary is of {state['tokens']}s"
            )
            raise DataError([Problem(source.file, why)])
        source = source.reblocked(int(state["block_size"]))
        if len(source) == 0:
            why = f"the text is shorter than one block of block_size + 1 = {source.block_size + 1}"
            raise DataError([Problem(source.file, why)])
        return source

    @staticmethod
    def _padded(source: TextSource, state: dict[str, Any], rows: Sequence[int]) -> np.ndarray:
        """(len(rows), length) int64 ids: each text's first ``length`` tokens, ``<pad>`` before
        them (as Keras pads), so a recurrent layer's last step reads the text's end."""
        assert source.rows is not None
        length, vocab = state["length"], state["vocab"]
        out = np.zeros((len(rows), length), dtype=np.int64)  # PAD is id 0
        for k, r in enumerate(rows):
            ids = encode(source.rows[int(r)][:length], vocab)
            out[k, length - len(ids) :] = ids
        return out

    def _class_indices(
        self, source: TextSource, state: dict[str, Any], rows: Sequence[int]
    ) -> np.ndarray:
        """The class index of each row's label; labels the training rows never had are
        reported (file, line, column) all at once."""
        if source.labels is None:
            why = f"no label column {self.label_column!r}: it is needed to evaluate"
            raise DataError([Problem(source.file, why)])
        index = {c: i for i, c in enumerate(state["classes"])}
        out = np.zeros(len(rows), dtype=np.int64)
        problems = []
        for k, r in enumerate(rows):
            label = source.labels[int(r)]
            if label in index:
                out[k] = index[label]
            else:
                line = source.lines[int(r)] if source.lines else None
                why = f"label {label!r} is not one of the run's classes {state['classes']}"
                problems.append(Problem(source.file, why, row=line, column=self.label_column))
        if problems:
            raise DataError(problems[:MAX_PROBLEMS], max(0, len(problems) - MAX_PROBLEMS))
        return out

    def sizes(self, state: dict[str, Any]) -> dict[str, int]:
        """``vocab``: the vocabulary's size; ``classes``: the vocabulary too for next_token
        (the model predicts a token), else the number of class names."""
        vocab = len(state["vocab"])
        classes = vocab if state["task"] == "next_token" else len(state["classes"])
        return {"vocab": vocab, "classes": classes}

    def class_names(self, state: dict[str, Any]) -> list[str] | None:
        """The class names of a classify run; None for next_token."""
        return list(state["classes"]) if state["task"] == "classify" else None

"""Hostile text data through real ``agrad train`` / ``agrad generate`` subprocesses: each is a
located exit 2 (the config and the file, line or byte at fault), no traceback, no run folder."""

from __future__ import annotations

import os

from hostile_harness import assert_refused, no_run_folder, run_agrad, write

LANGUAGE_MODEL = """
data:
  dataset: text
  path: {path}
  task: next_token
  block_size: {block_size}
  val_split: 0.25
model:
  - {{type: Embedding, num_embeddings: 16, embedding_dim: 4}}
  - {{type: Linear, in_features: 4, out_features: 16}}
loss: cross_entropy
train: {{epochs: 1, batch_size: 4}}
"""


def _config(tmp_path, path: str, block_size: int = 4) -> str:
    text = LANGUAGE_MODEL.format(path=path, block_size=block_size)
    return write(str(tmp_path / "c.yaml"), text)


class TestTextHostile:
    """``dataset: text`` given unusable text: located refusals."""

    def _refused(self, tmp_path, path: str, *words: str, block_size: int = 4) -> None:
        res = run_agrad("train", _config(tmp_path, path, block_size), cwd=str(tmp_path))
        assert_refused(res, "c.yaml:", "data", *words)
        assert no_run_folder(str(tmp_path))

    def test_non_utf8_file(self, tmp_path):
        write(str(tmp_path / "t.txt"), b"To be, or not\nto be\xe9 that is\n")
        self._refused(tmp_path, "t.txt", "t.txt", "line 2, byte offset 19: byte 0xe9", "UTF-8")

    def test_empty_file(self, tmp_path):
        write(str(tmp_path / "t.txt"), b"")
        self._refused(tmp_path, "t.txt", "t.txt", "the file is empty")

    def test_folder_with_no_text_files(self, tmp_path):
        os.mkdir(tmp_path / "books")
        write(str(tmp_path / "books" / "cover.png"), b"\x89PNG\r\n")
        self._refused(tmp_path, "books", "books", "the folder has no text files (*.txt)")

    def test_block_size_larger_than_the_text(self, tmp_path):
        write(str(tmp_path / "t.txt"), "abcdefgh")  # 8 chars: block_size 8 needs 9
        self._refused(
            tmp_path, "t.txt", "t.txt", "8 char tokens, fewer than block_size + 1 = 9", block_size=8
        )

    def test_generate_on_a_run_that_is_not_a_language_model(self, tmp_path):
        run = tmp_path / "run"
        run.mkdir()
        write(str(run / "config.resolved.yaml"), "data:\n  dataset: digits\n")
        res = run_agrad("generate", str(run), "--prompt", "To be", cwd=str(tmp_path))
        assert_refused(res, "config.resolved.yaml", "data.dataset is 'digits'", "task: next_token")

    def test_generate_on_a_text_classification_run(self, tmp_path):
        run = tmp_path / "run"
        run.mkdir()
        write(str(run / "config.resolved.yaml"), "data:\n  dataset: text\n  task: classify\n")
        res = run_agrad("generate", str(run), cwd=str(tmp_path))
        assert_refused(res, "config.resolved.yaml", "data.task is 'classify'", "next_token")

    def test_generate_on_a_run_without_its_vocabulary(self, tmp_path):
        run = tmp_path / "run"
        run.mkdir()
        write(str(run / "config.resolved.yaml"), "data:\n  dataset: text\n")
        write(str(run / "data_state.json"), "[1, 2")
        res = run_agrad("generate", str(run), cwd=str(tmp_path))
        assert_refused(res, "data_state.json")

    def test_generate_on_a_missing_run(self, tmp_path):
        res = run_agrad("generate", str(tmp_path / "nope"), cwd=str(tmp_path))
        assert_refused(res, "no such run folder", "nope")

"""Hostile tables through real ``agrad train`` subprocesses: each is a located exit 2 (the file,
and the row and column at fault), every problem listed, no traceback, no run folder."""

from __future__ import annotations

import pytest
from hostile_harness import assert_refused, no_run_folder, run_agrad, write
from table_files import parquet_claiming

CONFIG = """
data: {{dataset: table, path: {path}, target: {target}, val_split: 0.25}}
model:
  - {{type: Linear, in_features: auto, out_features: 2}}
loss: CrossEntropyLoss
train: {{epochs: 1, batch_size: 4}}
"""

GOOD_ROWS = "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(12))


class TestTableHostile:
    def refused(self, tmp_path, path: str, *words: str, target: str = "y") -> None:
        pytest.importorskip("pyarrow")
        write(str(tmp_path / "c.yaml"), CONFIG.format(path=path, target=target))
        res = run_agrad("train", "c.yaml", cwd=str(tmp_path))
        assert_refused(res, *words)
        assert no_run_folder(str(tmp_path))

    def test_broken_quoting(self, tmp_path):
        write(str(tmp_path / "t.csv"), 'x,z,y\n1,2,a\n3,"4,b\n5,6,a\n' + GOOD_ROWS)
        self.refused(
            tmp_path, "t.csv", "t.csv, row 3", "a quoted value opened in this row is never closed"
        )

    def test_rows_of_the_wrong_width_are_all_listed(self, tmp_path):
        write(str(tmp_path / "t.csv"), "x,z,y\n1,2\n" + GOOD_ROWS + "1,2,3,a\n")
        self.refused(
            tmp_path, "t.csv", "t.csv, row 2: expected 3 values", "t.csv, row 15: expected 3 values"
        )

    def test_mixed_types(self, tmp_path):
        write(str(tmp_path / "t.csv"), "x,z,y\n" + GOOD_ROWS.replace("4,1,a", "four,1,a"))
        self.refused(
            tmp_path, "t.csv", "column 'x': mixed types", "'four' at row 6", "{x: category}"
        )

    def test_unknown_target_suggests_from_the_header(self, tmp_path):
        write(str(tmp_path / "t.csv"), "x,z,label\n" + GOOD_ROWS)
        self.refused(
            tmp_path,
            "t.csv",
            "t.csv, row 1: target: no column 'lable' in the header (did you mean 'label'?)",
            target="lable",
        )

    def test_one_class_target(self, tmp_path):
        write(str(tmp_path / "t.csv"), "x,z,y\n" + "".join(f"{i},{i},a\n" for i in range(12)))
        self.refused(tmp_path, "t.csv", "column 'y': the target has only the class 'a'")

    def test_all_missing_column(self, tmp_path):
        rows = GOOD_ROWS.replace("\n", ",NA\n")
        write(str(tmp_path / "t.csv"), "x,z,y,w\n" + rows)
        self.refused(tmp_path, "t.csv", "column 'w': every training row is missing this column")

    def test_a_parquet_claiming_a_billion_rows(self, tmp_path):
        parquet_claiming(str(tmp_path / "huge.parquet"), 10**9)
        self.refused(
            tmp_path, "huge.parquet", "huge.parquet: its metadata claims 1,000,000,000 rows"
        )

"""``dataset: table`` through its DataKind methods: statistics against pandas on the training
rows, no leak from other rows, encodings by hand, new raw rows for predict, and every located
problem (file, row, column) reported at once."""

from __future__ import annotations

import json

import numpy as np
import pytest
from table_files import parquet_claiming, penguins_csv

from autogradcli.data.kinds import KINDS, DataError


def kind(path, **settings):
    """A table kind on ``path`` (skips without pyarrow)."""
    pytest.importorskip("pyarrow")
    settings.setdefault("target", "species")
    return KINDS["table"](path=str(path), **settings)


def write(path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def problems(err: DataError) -> list[tuple]:
    return [(p.row, p.column, p.why) for p in err.problems]


def penguins_split(n: int = 344):
    idx = np.random.default_rng(1).permutation(n)
    return np.sort(idx[:206]), idx[206:]


# --- statistics against pandas ------------------------------------------------------------


def test_penguins_statistics_match_pandas_on_the_training_rows():
    pd = pytest.importorskip("pandas")
    path = penguins_csv()
    k = kind(path, columns={"year": "drop"})
    src = k.read()
    train, _ = penguins_split(len(src))
    state = json.loads(json.dumps(k.fit(src, train)))  # plain JSON, unchanged by a round trip
    df = pd.read_csv(path).iloc[train]  # pandas' own NA handling: "NA" is missing
    cols = {c["name"]: c for c in state["features"]}
    assert list(cols) == [
        "island",
        "bill_length_mm",
        "bill_depth_mm",
        "flipper_length_mm",
        "body_mass_g",
        "sex",
    ]
    for name in ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]:
        assert cols[name]["type"] == "number"
        assert cols[name]["center"] == pytest.approx(df[name].mean(), rel=1e-12)
        assert cols[name]["scale"] == pytest.approx(df[name].std(ddof=0), rel=1e-12)
        assert cols[name]["fill"] == pytest.approx(df[name].median(), rel=1e-12)
    assert cols["island"]["vocab"] == sorted(df["island"].unique())
    assert df["sex"].isna().any()  # the training rows have gaps: a "<missing>" category
    assert cols["sex"]["vocab"] == sorted(["<missing>", *df["sex"].dropna().unique()])
    assert state["target"] == {
        "name": "species",
        "type": "category",
        "classes": sorted(df["species"].unique()),
    }
    assert k.class_names(state) == ["Adelie", "Chinstrap", "Gentoo"]
    assert k.sizes(state) == {"classes": 3} and state["width"] == 4 + 4 + 4


def test_fit_never_reads_rows_outside_train(tmp_path):
    """Every value outside the training rows replaced (an outlier, a new class, a word in a
    number column): the state does not move."""
    path = penguins_csv()
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    train, other = penguins_split(len(lines) - 1)
    k = kind(path)
    before = k.fit(k.read(), train)
    for i in other:
        lines[i + 1] = "Emperor,Ross,9999,-1,1e6,NA,other,1800"
    poisoned = write(tmp_path / "p.csv", "\n".join(lines) + "\n")
    k2 = kind(poisoned)
    assert k2.fit(k2.read(), train) == before
    with pytest.raises(DataError) as err:  # the poisoned rows are seen when encoded: new class
        k2.samples(k2.read(), before, other)
    assert "'Emperor' is not one the training rows had" in str(err.value)


def test_penguin_samples_are_encoded_with_the_fitted_state():
    pd = pytest.importorskip("pandas")
    path = penguins_csv()
    k = kind(path, columns={"year": "drop"})
    src = k.read()
    train, other = penguins_split(len(src))
    state = k.fit(src, train)
    ds = k.samples(src, state, other)
    x, y = (t.numpy() for t in ds[:])
    assert x.dtype == np.float32 and y.dtype == np.int64 and x.shape == (len(other), 12)
    df, tr = pd.read_csv(path).iloc[other], pd.read_csv(path).iloc[train]
    mass = df["body_mass_g"].fillna(tr["body_mass_g"].median())
    want = (mass - tr["body_mass_g"].mean()) / tr["body_mass_g"].std(ddof=0)
    np.testing.assert_allclose(x[:, 7], want.to_numpy(), rtol=1e-6)
    islands = ["Biscoe", "Dream", "Torgersen"]
    np.testing.assert_array_equal(x[:, 0], 0)  # the unknown slot: every island was seen
    for j, isl in enumerate(islands):
        np.testing.assert_array_equal(x[:, 1 + j], (df["island"] == isl).to_numpy())
    sex = df["sex"].fillna("<missing>").to_numpy()
    for j, s in enumerate(["<missing>", "female", "male"]):
        np.testing.assert_array_equal(x[:, 9 + j], sex == s)
    np.testing.assert_array_equal(y, df["species"].map({"Adelie": 0, "Chinstrap": 1, "Gentoo": 2}))
    assert k.names(src)[:2] == ["2", "3"]  # the file's line numbers: the header is line 1


# --- formats ----------------------------------------------------------------------------


CSV = "a,b,c\n1,x,yes\n2,y,no\n3,x,yes\n4,y,NA\n"


def test_tsv_and_parquet_give_the_csv_state(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    csv = write(tmp_path / "t.csv", CSV)
    tsv = write(tmp_path / "t.tsv", CSV.replace(",", "\t"))
    pq.write_table(
        pa.table({"a": [1, 2, 3, 4], "b": ["x", "y", "x", "y"], "c": [True, False, True, None]}),
        tmp_path / "t.parquet",
    )
    states = []
    for p in (csv, tsv, str(tmp_path / "t.parquet")):
        k = kind(p, target="b")
        states.append(k.fit(k.read(), [0, 1, 2, 3]))
    assert states[0] == states[1] == states[2]
    c = states[0]["features"][1]
    assert c == {"name": "c", "type": "boolean", "fill": 1.0, "width": 1, "start": 1}


def test_parquet_rows_are_numbered_from_one(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"a": ["1", "2", "x"], "b": ["p", "q", "p"]}), tmp_path / "t.parquet")
    k = kind(tmp_path / "t.parquet", target="b", columns={"a": "number"})
    with pytest.raises(DataError) as err:
        k.fit(k.read(), [0, 1, 2])
    assert problems(err.value) == [(3, "a", "'x' is not a number")]


def test_blank_lines_are_skipped_and_rows_keep_their_line_numbers(tmp_path):
    path = write(tmp_path / "t.csv", "a,b\n1,x\n\n2,y\n3,x\n")
    k = kind(path, target="b")
    src = k.read()
    assert len(src) == 3 and k.names(src) == ["2", "4", "5"]


def test_a_bom_crlf_lines_and_a_quoted_header_name(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'\xef\xbb\xbfa,"b c",y\r\n1,x,p\r\n2,y,q\r\n')
    src = kind(path, target="y").read()
    assert src.raw.header == ["a", "b c", "y"]
    assert [list(src.raw.cells[h]) for h in src.raw.header] == [["1", "2"], ["x", "y"], ["p", "q"]]


# --- predict on raw rows ----------------------------------------------------------------


def test_predict_input_takes_raw_rows_reordered_extra_and_unseen(tmp_path):
    train = write(tmp_path / "t.csv", "x,colour,y\n1,red,a\n3,blue,b\n5,red,a\n7,blue,b\n")
    k = kind(train, target="y")
    state = k.fit(k.read(), [0, 1, 2, 3])
    new = write(tmp_path / "new.csv", "note,colour,x\nhi,green,3\n,red,NA\nz,,7\n")
    x = k.inputs(k.read(new), state)[:][0].numpy()
    mean, std, median = 4.0, np.std([1, 3, 5, 7]), 4.0
    want = np.array(
        [
            [(3 - mean) / std, 1, 0, 0],  # green: never seen, the unknown slot
            [(median - mean) / std, 0, 0, 1],  # NA: the training median; red
            [(7 - mean) / std, 1, 0, 0],  # a gap where training had none: unknown
        ],
        dtype=np.float32,
    )
    np.testing.assert_allclose(x, want, rtol=1e-6)


def test_predict_input_missing_a_feature_column_is_located(tmp_path):
    train = write(tmp_path / "t.csv", "height,colour,y\n1,red,a\n3,blue,b\n")
    k = kind(train, target="y")
    state = k.fit(k.read(), [0, 1])
    new = write(tmp_path / "new.csv", "colour,heigth\nred,1\n")
    with pytest.raises(DataError) as err:
        k.inputs(k.read(new), state)
    assert problems(err.value) == [
        (
            None,
            "height",
            "not in the header, and the model was trained on it (did you mean 'heigth'?)",
        )
    ]
    assert str(new) in str(err.value)


# --- settings -----------------------------------------------------------------------------


def test_numeric_target_is_regression_unless_declared_category(tmp_path):
    path = write(tmp_path / "t.csv", "x,y\n1,10\n2,2\n3,10\n4,2.5\n")
    k = kind(path, target="y")
    state = k.fit(k.read(), [0, 1, 2, 3])
    assert k.class_names(state) is None and k.sizes(state) == {}
    y = k.samples(k.read(), state)[:][1].numpy()
    assert y.dtype == np.float32 and y.shape == (4, 1) and y[:, 0].tolist() == [10, 2, 10, 2.5]
    k = kind(path, target="y", columns={"y": "category"})
    state = k.fit(k.read(), [0, 1, 2, 3])
    assert k.class_names(state) == ["2", "2.5", "10"]  # numbers in numeric order, as written
    assert k.samples(k.read(), state)[:][1].numpy().tolist() == [2, 0, 2, 1]


def test_scale_fill_and_encode_options(tmp_path):
    path = write(tmp_path / "t.csv", "n,m,c,y\n1,2,a,p\n3,NA,b,q\nNA,6,b,p\n7,7,NA,q\n")
    k = kind(
        path,
        target="y",
        columns={
            "n": {"fill": "mean", "scale": "minmax"},
            "m": {"fill": 0, "scale": "none"},
            "c": {"fill": "mode", "encode": "embedding"},
        },
    )
    state = k.fit(k.read(), [0, 1, 2, 3])
    n, m, c = state["features"]
    assert (n["fill"], n["center"], n["scale"]) == (pytest.approx(11 / 3), 1.0, 6.0)
    assert (m["fill"], m["center"], m["scale"]) == (0.0, 0.0, 1.0)
    assert (c["vocab"], c["fill"], c["width"]) == (["a", "b"], "b", 1)
    x = k.samples(k.read(), state)[:][0].numpy()
    np.testing.assert_allclose(x[:, 0], [0, 2 / 6, (11 / 3 - 1) / 6, 1], rtol=1e-6)
    np.testing.assert_array_equal(x[:, 1], [2, 0, 6, 7])
    np.testing.assert_array_equal(x[:, 2], [1, 2, 2, 2])  # embedding index: 0 is unknown


def test_a_constant_column_keeps_scale_one(tmp_path):
    path = write(tmp_path / "t.csv", "n,y\n5,p\n5,q\n")
    k = kind(path, target="y")
    state = k.fit(k.read(), [0, 1])
    assert state["features"][0]["scale"] == 1.0
    assert k.samples(k.read(), state)[:][0].numpy().tolist() == [[0.0], [0.0]]


def test_missing_drop_rows_and_error(tmp_path):
    path = write(tmp_path / "t.csv", "n,c,y\n1,a,p\nNA,b,q\n3,,p\n4,b,\n5,a,q\n")
    k = kind(path, target="y", missing="drop_rows")
    assert k.names(k.read()) == ["2", "6"]
    with pytest.raises(DataError) as err:
        kind(path, target="y", missing="error").read()
    assert [(r, c) for r, c, _ in problems(err.value)] == [(3, "n"), (4, "c"), (5, "y")]
    with pytest.raises(DataError) as err:  # fill: a missing target cannot be filled
        kind(path, target="y").read()
    assert problems(err.value) == [
        (5, "y", "the target is missing (fix it, or set `missing: drop_rows`)")
    ]


@pytest.mark.parametrize(
    "columns, message",
    [
        ({"a": "numbr"}, "columns.a.type: 'numbr' is not one of number, category, boolean, drop"),
        ({"a": {"scale": "std"}}, "columns.a.scale: 'std' is not one of standard, minmax, none"),
        (
            {"a": {"type": "number", "fill": "missing"}},
            "columns.a.fill: 'missing' is not one of median, mean or a number",
        ),
        ({"a": {"kind": "number"}}, "columns.a: unknown key 'kind'"),
        (
            {"a": {"encode": "onehot"}},
            "columns.a.encode: 'onehot' is not one of one_hot, embedding",
        ),
        ({"y": "drop"}, "columns.y: the target can be declared number or category, not drop"),
    ],
)
def test_column_settings_are_checked_when_built(columns, message):
    pytest.importorskip("pyarrow")
    with pytest.raises(ValueError) as err:
        KINDS["table"](path="t.csv", target="y", columns=columns)
    assert message in str(err.value)


# --- located problems -------------------------------------------------------------------


def test_unknown_target_and_column_names_suggest_from_the_header(tmp_path):
    path = write(tmp_path / "t.csv", "species,island,mass\nA,x,1\nB,y,2\n")
    with pytest.raises(DataError) as err:
        kind(path, target="specie", columns={"islnd": "category", "zzz": "drop"}).read()
    assert problems(err.value) == [
        (1, None, "target: no column 'specie' in the header (did you mean 'species'?)"),
        (1, None, "columns: no column 'islnd' in the header (did you mean 'island'?)"),
        (
            1,
            None,
            "columns: no column 'zzz' in the header (the columns are 'species', 'island', 'mass')",
        ),
    ]


def test_every_bad_number_in_a_declared_number_column_is_located(tmp_path):
    path = write(tmp_path / "t.csv", "a,b,y\n1,2,p\nx,3,q\n2,inf,p\n3,four,q\n")
    k = kind(path, target="y", columns={"a": "number", "b": "number"})
    with pytest.raises(DataError) as err:
        k.fit(k.read(), [0, 1, 2, 3])
    assert problems(err.value) == [
        (3, "a", "'x' is not a number"),
        (4, "b", "'inf' is not a number"),
        (5, "b", "'four' is not a number"),
    ]


def test_mixed_types_and_an_all_missing_column_and_one_class_at_once(tmp_path):
    path = write(tmp_path / "t.csv", "a,b,y\n1,NA,p\n2,,p\nthree,NA,p\n4,NA,p\n")
    k = kind(path, target="y")
    with pytest.raises(DataError) as err:
        k.fit(k.read(), [0, 1, 2, 3])
    assert problems(err.value) == [
        (
            None,
            "a",
            "mixed types: 3 numbers and 1 other values ('three' at row 4); fix those cells, or declare `columns: {a: category}`",
        ),
        (None, "b", "every training row is missing this column: drop it with `columns: {b: drop}`"),
        (
            None,
            "y",
            "the target has only the class 'p' in the training rows: a classifier needs two or more",
        ),
    ]


def test_mostly_words_is_a_category_not_mixed(tmp_path):
    path = write(tmp_path / "t.csv", "a,y\nx,p\ny,q\n3,p\n")
    k = kind(path, target="y")
    assert k.fit(k.read(), [0, 1, 2])["features"][0]["vocab"] == ["3", "x", "y"]


def test_broken_rows_are_all_reported_with_their_lines(tmp_path):
    path = write(tmp_path / "t.csv", 'a,b,y\n1,2,p\n1,2\n3,4,q,5\n5,6,p\n7,"8,q\n9,9,p\n')
    with pytest.raises(DataError) as err:
        kind(path, target="y").read()
    assert problems(err.value) == [
        (3, None, "expected 3 values (as in the header), found 2"),
        (4, None, "expected 3 values (as in the header), found 4"),
        (6, None, "a quoted value opened in this row is never closed (check its quotes)"),
    ]


def test_the_problem_list_is_bounded(tmp_path):
    from autogradcli.data.table.problems import MAX_PROBLEMS

    n = MAX_PROBLEMS + 5
    path = write(tmp_path / "t.csv", "a,y\n" + "".join(f"w{i},p\n" for i in range(n)) + "1,q\n")
    k = kind(path, target="y", columns={"a": "number"})
    with pytest.raises(DataError) as err:
        k.fit(k.read(), range(n + 1))
    assert len(err.value.problems) == MAX_PROBLEMS and err.value.more == 5
    assert str(err.value).endswith("... and 5 more")


def test_header_problems(tmp_path):
    with pytest.raises(DataError) as err:
        kind(write(tmp_path / "t.csv", "a,,a,y\n1,2,3,p\n"), target="y").read()
    assert problems(err.value) == [
        (1, None, "column 2 of the header has no name"),
        (1, "a", "the header names column 'a' twice"),
    ]
    for text, why in [("", "is empty"), ("a,y\n", "has a header but no data rows")]:
        with pytest.raises(DataError) as err:
            kind(write(tmp_path / "e.csv", text), target="y").read()
        assert problems(err.value)[0][2] == why


def test_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,y\n1,p\n2,\xff\n")
    with pytest.raises(DataError) as err:
        kind(path, target="y").read()
    assert problems(err.value) == [(3, None, "is not UTF-8 text (byte 0xff)")]


def test_file_and_format_problems(tmp_path):
    for path, why in [
        (tmp_path / "nope.csv", "no such file"),
        (tmp_path, "is a folder, not a table file"),
        (write(tmp_path / "t.txt", "a,y\n"), "cannot tell the format from the extension .txt"),
        (write(tmp_path / "p.parquet", "a,y\n"), "is not a Parquet file"),
    ]:
        with pytest.raises(DataError) as err:
            kind(path, target="y").read()
        assert why in str(err.value)


def test_one_hot_width_just_inside_and_outside(tmp_path):
    from autogradcli.data.table.fit import MAX_ONE_HOT

    for n, ok in ((MAX_ONE_HOT, True), (MAX_ONE_HOT + 1, False)):
        path = write(
            tmp_path / f"t{n}.csv", "id,y\n" + "".join(f"u{i},{'pq'[i % 2]}\n" for i in range(n))
        )
        k = kind(path, target="y")
        if ok:
            assert k.fit(k.read(), range(n))["features"][0]["width"] == n + 1
            continue
        with pytest.raises(DataError) as err:
            k.fit(k.read(), range(n))
        assert problems(err.value) == [
            (
                None,
                "id",
                "1,001 distinct values in the training rows, more than 1,000 one-hot inputs (an identifier?): drop it with `columns: {id: drop}`, or give it `encode: embedding`",
            )
        ]
        k = kind(path, target="y", columns={"id": {"encode": "embedding"}})
        assert k.fit(k.read(), range(n))["features"][0]["width"] == 1


def test_row_limit_just_inside_and_outside(tmp_path, monkeypatch):
    from autogradcli.data.table import read

    monkeypatch.setattr(read, "MAX_ROWS", 4)
    four = write(tmp_path / "t.csv", "a,y\n1,p\n2,q\n3,p\n4,q\n")
    assert len(kind(four, target="y").read()) == 4
    five = write(tmp_path / "u.csv", "a,y\n1,p\n2,q\n3,p\n4,q\n5,p\n")
    with pytest.raises(DataError, match="has more than 4 rows, the most a table may have"):
        kind(five, target="y").read()


def test_a_parquet_claiming_a_billion_rows_is_refused_before_reading(tmp_path):
    path = parquet_claiming(str(tmp_path / "huge.parquet"), 10**9)
    with pytest.raises(DataError) as err:
        kind(path, target="y").read()
    assert "its metadata claims 1,000,000,000 rows, more than 10,000,000" in str(err.value)
    small = parquet_claiming(str(tmp_path / "small.parquet"), 3)  # the same bytes, true count
    assert len(kind(small, target="y").read()) == 3


# --- through the CLI: configs/penguins.yaml on the raw palmerpenguins CSV ----------------


def _train_penguins(capsys, tmp_path, data: str, name: str) -> str:
    """``agrad train configs/penguins.yaml`` on ``data``; the run folder."""
    import glob
    import os
    import shutil

    from test_cli_helpers import REPO, agrad

    config = tmp_path / f"{name}.yaml"
    shutil.copy(os.path.join(REPO, "configs", "penguins.yaml"), config)
    runs = tmp_path / f"runs-{name}"
    code, out, err = agrad(
        capsys, "train", str(config), "--set", f"data.path={data}", "--runs-dir", str(runs)
    )
    assert code == 0, out + err
    (run,) = glob.glob(str(runs / "*"))
    return run


def _training_rows(n: int, seed: int, test_split: float, val_split: float) -> list[int]:
    """The rows a run trains on, by the documented split: test_split of all rows first, then
    val_split of the rest, each a permutation seeded with the run's seed."""
    import autogradcli.data as D

    rows = list(range(n))
    for frac in (test_split, val_split):
        k = round(len(rows) * frac)
        rest, _ = D.random_split(rows, [len(rows) - k, k], generator=D.Generator(seed))
        rows = [rows[i] for i in rest.indices]
    return rows


@pytest.mark.slow
def test_penguins_config_from_the_raw_csv_to_predictions(capsys, tmp_path):
    """The shipped config on palmerpenguins' own CSV (NA rows kept): test accuracy >= 0.95;
    the stored state is pandas' statistics of the training rows; predict takes raw rows
    (reordered, an extra column, no target, gaps) once the training file is gone."""
    import os
    import shutil

    import yaml
    from test_cli_helpers import REPO, agrad

    pd = pytest.importorskip("pandas")
    shipped = penguins_csv()
    with open(shipped, "rb") as a, open(os.path.join(REPO, "configs/data/penguins.csv"), "rb") as b:
        assert a.read() == b.read()  # the repository's copy is the package's file, unchanged
    data = str(tmp_path / "penguins.csv")
    shutil.copy(shipped, data)
    run = _train_penguins(capsys, tmp_path, data, "penguins")
    with open(os.path.join(run, "summary.json"), encoding="utf-8") as fh:
        test = json.load(fh)["test"]
    assert test["samples"] == 69 and test["test_acc"] >= 0.95  # measured: 1.0 (69/69)

    with open(os.path.join(run, "config.resolved.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    d = cfg["data"]
    train = _training_rows(344, cfg["seed"], d["test_split"], d["val_split"])
    with open(os.path.join(run, "data_state.json"), encoding="utf-8") as fh:
        state = json.load(fh)["state"]
    df = pd.read_csv(shipped).iloc[train]
    cols = {c["name"]: c for c in state["features"]}
    for name in ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]:
        assert cols[name]["center"] == pytest.approx(df[name].mean(), rel=1e-12)
        assert cols[name]["scale"] == pytest.approx(df[name].std(ddof=0), rel=1e-12)
        assert cols[name]["fill"] == pytest.approx(df[name].median(), rel=1e-12)
    assert cols["island"]["vocab"] == sorted(df["island"].unique())
    assert state["target"]["classes"] == sorted(df["species"].unique())

    raw = pd.read_csv(shipped, dtype=str, keep_default_na=False)
    picked = raw.iloc[[0, 3, 152, 160, 220, 300]]  # row 3 is all NA but species, island, year
    as_given = str(tmp_path / "as_given.csv")
    picked.to_csv(as_given, index=False)
    shuffled = picked.drop(columns="species")[
        [
            "sex",
            "year",
            "body_mass_g",
            "island",
            "bill_depth_mm",
            "flipper_length_mm",
            "bill_length_mm",
        ]
    ]
    shuffled.insert(2, "note", "x")
    moved = str(tmp_path / "new.csv")
    shuffled.to_csv(moved, index=False)
    os.remove(data)  # predict needs only the run folder
    outs = []
    for inp in (as_given, moved):
        out = str(tmp_path / f"pred-{os.path.basename(inp)}")
        code, o, e = agrad(capsys, "predict", run, "--input", inp, "--output", out)
        assert code == 0, o + e
        outs.append(pd.read_csv(out))
    assert outs[0].equals(outs[1])  # column order, an extra column and no target change nothing
    code, o, e = agrad(capsys, "eval", run, "--data", as_given)  # read with the run's spec
    assert code == 0 and "on as_given (6 samples)" in o, o + e
    shuffled.drop(columns="bill_depth_mm").to_csv(moved, index=False)
    code, o, e = agrad(
        capsys, "predict", run, "--input", moved, "--output", str(tmp_path / "p.csv")
    )
    assert code == 2 and "new.csv, column 'bill_depth_mm': not in the header" in e
    assert "Traceback" not in e
    pred = outs[1]
    assert list(pred.columns) == ["name", "pred", "class", "prob_0", "prob_1", "prob_2"]
    assert pred["name"].tolist() == [2, 3, 4, 5, 6, 7]  # rows of new.csv, by line
    np.testing.assert_allclose(pred[["prob_0", "prob_1", "prob_2"]].sum(axis=1), 1, rtol=1e-5)
    want = picked["species"].tolist()
    assert pred["class"].tolist()[:1] + pred["class"].tolist()[2:] == want[:1] + want[2:]


@pytest.mark.slow
def test_no_validation_or_test_row_reaches_the_stored_state(capsys, tmp_path):
    """Every row outside the training rows turned into an outlier (numbers x1000, a new
    island, a new sex): the run stores the same state as on the clean file."""
    import os
    import shutil

    import yaml
    from test_cli_helpers import REPO

    pd = pytest.importorskip("pandas")
    clean = str(tmp_path / "clean.csv")
    shutil.copy(penguins_csv(), clean)
    df = pd.read_csv(clean, dtype=str, keep_default_na=False)
    with open(os.path.join(REPO, "configs", "penguins.yaml"), encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    d = cfg["data"]
    train = set(_training_rows(len(df), cfg["seed"], d["test_split"], d["val_split"]))
    other = [i for i in range(len(df)) if i not in train]
    for name in ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]:
        df.loc[other, name] = "99999"
    df.loc[other, "island"], df.loc[other, "sex"] = "Atlantis", "unknown"
    poisoned = str(tmp_path / "poisoned.csv")
    df.to_csv(poisoned, index=False)
    states = []
    for data, name in ((clean, "clean"), (poisoned, "poisoned")):
        run = _train_penguins(capsys, tmp_path, data, name)
        with open(os.path.join(run, "data_state.json"), encoding="utf-8") as fh:
            states.append(json.load(fh)["state"])
    assert states[0] == states[1]


def test_readme_tables_section_shows_the_shipped_config_and_the_na_spellings():
    import os
    import re

    from test_cli_helpers import REPO

    from autogradcli.data.table.read import NA_VALUES

    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    section = readme[readme.index("### Tables: `dataset: table`") :]
    block = section[
        section.index("```yaml\n") + 8 : section.index("```\n", section.index("```yaml"))
    ]
    with open(os.path.join(REPO, "configs", "penguins.yaml"), encoding="utf-8") as fh:
        assert block == fh.read()
    listed = section[: section.index("are missing;")]
    spelled = set(re.findall(r"`([^`]*)`", listed[listed.index("an empty cell") :]))
    assert spelled | {""} == NA_VALUES

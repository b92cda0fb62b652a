"""``dataset: text`` through its DataKind methods: the vocabulary (hand-computed, training
blocks only), windows as views of one array, leak-free blocks, word tokens, classification
rows, and located errors for bad files."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from peak_rss import peak_rss_kib

from autogradcli.data.kinds import KINDS, DataError
from autogradcli.data.kinds.text import TextKind
from autogradcli.data.text.tokens import detokenize, tokenize


def _kind(path, **kw) -> TextKind:
    return KINDS["text"](path=str(path), **kw)


def _write(path, text: str | bytes):
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_registered():
    assert KINDS["text"] is TextKind


def test_vocabulary_is_the_training_blocks_only(tmp_path):
    # block_size 3: blocks of 4 chars "aab!" "ccdc" "baXq"; train on the first two
    kind = _kind(_write(tmp_path / "t.txt", "aab!ccdcbaXq"), block_size=3)
    src = kind.read()
    assert len(src) == 3
    state = kind.fit(src, [0, 1])
    # counts a:2 b:1 !:1 c:3 d:1, by falling count then code point ('!' < 'b' < 'd')
    assert state["vocab"] == ["<unk>", "c", "a", "!", "b", "d"]
    val = kind.samples(src, state, [2])
    x, y = val[0]
    assert x.tolist() == [4, 2, 0]  # "baX": X only in the validation block -> <unk>
    assert y.tolist() == [2, 0, 0]  # "aXq"
    assert kind.sizes(state) == {"vocab": 6, "classes": 6}
    assert kind.class_names(state) is None


def test_fit_on_other_rows_changes_the_vocabulary(tmp_path):
    kind = _kind(_write(tmp_path / "t.txt", "aab!ccdcbaXq"), block_size=3)
    src = kind.read()
    assert kind.fit(src, [2])["vocab"] == ["<unk>", "X", "a", "b", "q"]


def test_samples_are_views_of_one_array(tmp_path):
    text = "the quick brown fox jumps over the lazy dog\n" * 20
    kind = _kind(_write(tmp_path / "t.txt", text), block_size=8)
    src = kind.read()
    state = kind.fit(src, range(len(src)))
    train = kind.samples(src, state, [0, 3, 5], train=True)
    val = kind.samples(src, state, [1, 2])
    ids = src.ids(state["vocab"])
    # 29 distinct chars + <unk>: uint8 ids, memory-mapped from a file
    assert ids.dtype == np.uint8 and ids.shape == (len(text),)
    assert isinstance(ids, np.memmap)
    for ds in (train, val):
        for k in range(len(ds)):
            x, y = ds[k]
            assert np.shares_memory(x, ids) and np.shares_memory(y, ids)
            assert x.base is ids or x.base is ids.base
            assert x.shape == y.shape == (8,)
            assert (x[1:] == y[:-1]).all()
    assert train[0][0].base is val[0][0].base  # one array for every split
    vocab = state["vocab"]
    x, y = train[1]  # block 3 starts at token 27
    assert "".join(vocab[i] for i in x) == text[27:35]
    assert "".join(vocab[i] for i in y) == text[28:36]


def _span(window: np.ndarray, base: np.ndarray) -> set[int]:
    start = (window.ctypes.data - base.ctypes.data) // base.itemsize
    return set(range(start, start + window.shape[0]))


def test_training_and_validation_windows_never_overlap(tmp_path):
    kind = _kind(_write(tmp_path / "t.txt", "abcdefghij" * 50), block_size=6)
    src = kind.read()
    order = np.random.default_rng(0).permutation(len(src))
    train_rows, val_rows = order[:50].tolist(), order[50:].tolist()
    state = kind.fit(src, train_rows)
    ids = src.ids(state["vocab"])
    seen: list[set[int]] = []
    for rows in (train_rows, val_rows):
        ds = kind.samples(src, state, rows)
        covered: set[int] = set()
        for k in range(len(ds)):
            x, y = ds[k]
            covered |= _span(x, ids) | _span(y, ids)
        seen.append(covered)
    assert seen[0] and seen[1] and not seen[0] & seen[1]


@pytest.mark.parametrize(("n", "blocks"), [(8, 1), (15, 1), (16, 2)])
def test_block_count_at_its_limits(tmp_path, n, blocks):
    # block_size 7: a block is 8 tokens; a trailing part shorter than a block is not used
    kind = _kind(_write(tmp_path / "t.txt", "x" * n), block_size=7)
    assert len(kind.read()) == blocks


def test_block_size_just_larger_than_the_text_is_refused(tmp_path):
    path = _write(tmp_path / "t.txt", "x" * 7)
    with pytest.raises(DataError) as err:
        _kind(path, block_size=7).read()
    assert str(path) in str(err.value)
    assert "7 char tokens, fewer than block_size + 1 = 8" in str(err.value)


def test_word_tokens_rule_and_round_trip():
    text = "Hello, world!\nIt's  fine_2 go"
    pieces = tokenize(text, "word")
    assert pieces == ["Hello", ",", "world", "!", "\n", "It", "'", "s", "fine_2", "go"]
    assert detokenize(pieces, "word") == "Hello , world !\nIt ' s fine_2 go"
    assert list(tokenize("AbC", "char", lowercase=True)) == ["a", "b", "c"]


def test_word_vocabulary(tmp_path):
    kind = _kind(_write(tmp_path / "t.txt", "to be or not to be ."), tokens="word", block_size=2)
    src = kind.read()  # 7 tokens: blocks "to be or" and "not to be"
    assert len(src) == 2
    state = kind.fit(src, [0])
    assert state["vocab"] == ["<unk>", "be", "or", "to"]
    x, y = kind.samples(src, state, [1])[0]
    assert x.tolist() == [0, 3] and y.tolist() == [3, 1]


def test_max_vocab_keeps_the_most_frequent(tmp_path):
    kind = _kind(_write(tmp_path / "t.txt", "aaabbc"), block_size=5, max_vocab=3)
    src = kind.read()
    assert kind.fit(src, [0])["vocab"] == ["<unk>", "a", "b"]


def test_state_is_plain_json_and_rebuilds_the_samples(tmp_path):
    kind = _kind(_write(tmp_path / "t.txt", "hello world, hello text\n" * 4), block_size=5)
    src = kind.read()
    state = kind.fit(src, [0, 1, 2])
    again = json.loads(json.dumps(state))
    assert again == state
    fresh = _kind(tmp_path / "t.txt", block_size=5).read()
    a, b = kind.samples(src, state, [4]), kind.samples(fresh, again, [4])
    assert a[0][0].tolist() == b[0][0].tolist() and a[0][1].tolist() == b[0][1].tolist()


def test_predict_on_a_language_model_points_at_generate_and_eval(tmp_path):
    kind = _kind(_write(tmp_path / "t.txt", "abcdefgh"), block_size=3)
    src = kind.read()
    state = kind.fit(src, [0])
    other = kind.read(str(_write(tmp_path / "new.txt", "abcaxyz")))
    with pytest.raises(DataError) as err:
        kind.inputs(other, state)
    assert str(err.value).startswith(f"{tmp_path / 'new.txt'}: agrad predict writes one")
    assert "agrad generate RUN --prompt TEXT" in str(err.value)
    assert "agrad eval RUN --data FILE" in str(err.value)


def test_folder_of_text_files_in_path_order(tmp_path):
    folder = tmp_path / "books"
    (folder / "b").mkdir(parents=True)
    _write(folder / "b" / "two.txt", "second")
    _write(folder / "a.txt", "first")  # no newline at its end: one is put between files
    _write(folder / ".hidden.txt", "HIDDEN")
    _write(folder / "notes.md", "NOT TEXT")
    src = _kind(folder, block_size=2).read()
    assert "".join(src.pieces) == "first\nsecond"


def test_non_utf8_file_is_located(tmp_path):
    path = _write(tmp_path / "bad.txt", b"ab\ncd\xffe\n")
    with pytest.raises(DataError) as err:
        _kind(path, block_size=2).read()
    msg = str(err.value)
    assert msg.startswith(str(path)) and "line 2, byte offset 5: byte 0xff" in msg


def test_every_bad_file_of_a_folder_is_reported(tmp_path):
    _write(tmp_path / "a.txt", b"\xfe")
    _write(tmp_path / "b.txt", "fine")
    _write(tmp_path / "c.txt", b"ok\n\xc3")
    with pytest.raises(DataError) as err:
        _kind(tmp_path, block_size=1).read()
    assert [p.file for p in err.value.problems] == [
        str(tmp_path / "a.txt"),
        str(tmp_path / "c.txt"),
    ]
    assert "line 2, byte offset 3" in str(err.value)


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("empty", "the file is empty"),
        ("empty_folder", "the folder has no text files (*.txt)"),
        ("missing", "no such file or folder"),
    ],
)
def test_unusable_sources(tmp_path, setup, words):
    target = tmp_path / "x"
    if setup == "empty":
        target = _write(tmp_path / "x.txt", "")
    elif setup == "empty_folder":
        target.mkdir()
        _write(target / "data.csv.bak", "abc")
    with pytest.raises(DataError, match=r"\(\*\.txt\)|empty|no such") as err:
        _kind(target).read()
    assert str(target) in str(err.value) and words in str(err.value)


@pytest.mark.parametrize(
    ("kw", "words"),
    [
        ({"task": "translate"}, "task must be one of next_token, classify"),
        ({"tokens": "bpe"}, "tokens must be one of char, word"),
        ({"block_size": 0}, "block_size must be a positive integer"),
        ({"length": 0}, "length must be a positive integer"),
        ({"max_vocab": 2}, "max_vocab must be null or an integer >= 3"),
    ],
)
def test_bad_settings(kw, words):
    with pytest.raises(ValueError, match=words):
        TextKind(path="x.txt", **kw)


def test_every_bad_setting_is_reported_at_once():
    with pytest.raises(ValueError) as err:
        TextKind(path="x.txt", tokens="bpe", block_size=-1)
    assert str(err.value) == (
        "tokens must be one of char, word, got 'bpe'; block_size must be a positive integer, got -1"
    )


def test_smallest_good_settings(tmp_path):
    kind = TextKind(path=str(_write(tmp_path / "t.txt", "ab")), block_size=1, max_vocab=3)
    src = kind.read()
    assert kind.fit(src, [0])["vocab"] == ["<unk>", "a", "b"]


REVIEWS = (
    "text,label,stars\n"
    "good good film,pos,5\n"
    '"bad, very bad",neg,1\n'
    "fine film,pos,4\n"
    "awful,neg,1\n"
    "zzz new,meh,3\n"
)


def test_classify_vocabulary_classes_and_padding(tmp_path):
    path = _write(tmp_path / "r.csv", REVIEWS)
    kind = _kind(path, task="classify", tokens="word", length=3)
    src = kind.read()
    assert len(src) == 5
    state = kind.fit(src, [0, 1, 2, 3])
    # words of rows 1-4: good 2, film 2, bad 2, ',' 1, very 1, fine 1, awful 1
    vocab = ["<pad>", "<unk>", "bad", "film", "good", ",", "awful", "fine", "very"]
    assert state["vocab"] == vocab
    assert state["classes"] == ["neg", "pos"]
    ds = kind.samples(src, state, [0, 1, 3])
    assert ds[0][0].tolist() == [4, 4, 3] and ds[0][1] == 1  # good good film -> pos
    assert ds[1][0].tolist() == [2, 5, 8] and ds[1][1] == 0  # cut at 3: "bad , very"
    assert ds[2][0].tolist() == [0, 0, 6] and ds[2][1] == 0  # awful, padded in front
    assert kind.sizes(state) == {"vocab": 9, "classes": 2}
    assert kind.class_names(state) == ["neg", "pos"]


def test_classify_label_unseen_in_training_is_located(tmp_path):
    path = _write(tmp_path / "r.csv", REVIEWS)
    kind = _kind(path, task="classify", tokens="word")
    src = kind.read()
    state = kind.fit(src, [0, 1])
    with pytest.raises(DataError) as err:
        kind.samples(src, state, [4])
    assert str(err.value) == (
        f"{path}, row 6, column 'label': label 'meh' is not one of the run's classes ['neg', 'pos']"
    )


def test_classify_one_class_in_training_is_refused(tmp_path):
    kind = _kind(_write(tmp_path / "r.csv", REVIEWS), task="classify")
    src = kind.read()
    with pytest.raises(DataError, match="the training rows have 1 label"):
        kind.fit(src, [0, 2])


def test_classify_tsv_and_column_names(tmp_path):
    path = _write(tmp_path / "r.tsv", "review\tsentiment\nnice\tpos\nmeh\tneg\n")
    kind = _kind(path, task="classify", text_column="review", label_column="sentiment")
    src = kind.read()
    state = kind.fit(src, [0, 1])
    assert state["classes"] == ["neg", "pos"] and kind.samples(src, state)[0][1] == 1


def test_classify_missing_columns_with_did_you_mean(tmp_path):
    path = _write(tmp_path / "r.csv", "txt,labels\na,b\n")
    with pytest.raises(DataError) as err:
        _kind(path, task="classify").read()
    assert [p.why for p in err.value.problems] == [
        "no text column 'text'; did you mean 'txt'?",
        "no label column 'label'; did you mean 'labels'?",
    ]


def test_classify_bad_rows_are_all_reported(tmp_path):
    path = _write(tmp_path / "r.csv", "text,label\nok,a\ntoo,many,cells\nempty,\nok,b\n")
    with pytest.raises(DataError) as err:
        _kind(path, task="classify").read()
    assert [(p.row, p.why) for p in err.value.problems] == [
        (3, "3 fields where the header has 2"),
        (4, "empty label in column 'label'"),
    ]


def test_classify_predict_inputs_without_labels(tmp_path):
    kind = _kind(_write(tmp_path / "r.csv", REVIEWS), task="classify", tokens="word", length=2)
    src = kind.read()
    state = kind.fit(src, [0, 1, 2, 3])
    new = kind.read(str(_write(tmp_path / "new.csv", "text\ngood film\nqqq\n")))
    inputs = kind.inputs(new, state)
    assert [inputs[k].tolist() for k in range(2)] == [[4, 3], [0, 1]]
    lines = kind.read(str(_write(tmp_path / "new.txt", "good film\n\nbad\n")))
    assert [kind.inputs(lines, state)[k].tolist() for k in range(2)] == [[4, 3], [0, 2]]
    with pytest.raises(DataError, match="no label column 'label': it is needed to evaluate"):
        kind.samples(new, state)


def test_a_text_read_with_other_settings_uses_the_runs_blocks(tmp_path):
    trained = _kind(_write(tmp_path / "t.txt", "abcdefghij"), block_size=4)
    src = trained.read()
    state = trained.fit(src, [0])
    other = _kind(_write(tmp_path / "v.txt", "abcdefghijkl"), block_size=2).read()
    ds = trained.samples(other, state)
    assert len(ds) == 2 and [ds[k][0].shape for k in range(2)] == [(4,), (4,)]
    words = _kind(_write(tmp_path / "w.txt", "ab cd ef"), tokens="word", block_size=1).read()
    with pytest.raises(
        DataError, match="read as word tokens, but the run's vocabulary is of chars"
    ):
        trained.samples(words, state)
    short = _kind(_write(tmp_path / "s.txt", "abcd"), block_size=2).read()
    with pytest.raises(DataError, match="shorter than one block of block_size \\+ 1 = 5"):
        trained.samples(short, state)


def _reviews(path, n: int, seed: int) -> None:
    """``n`` short reviews whose label is fixed by one sentiment word among neutral ones."""
    import csv
    import random

    rng = random.Random(seed)
    neutral = [
        "the",
        "a",
        "film",
        "movie",
        "plot",
        "actor",
        "scene",
        "was",
        "is",
        "and",
        "very",
        "quite",
        "story",
        "music",
    ]
    words = {"pos": ["good", "great", "fine", "lovely"], "neg": ["bad", "awful", "poor", "dull"]}
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["review", "sentiment"])
        for _ in range(n):
            label = rng.choice(["pos", "neg"])
            text = [rng.choice(neutral) for _ in range(rng.randint(3, 7))]
            text.insert(rng.randrange(len(text) + 1), rng.choice(words[label]))
            out.writerow([" ".join(text) + ".", label])


CLASSIFY_CONFIG = """
name: reviews
seed: 0
data: {dataset: text, path: reviews.csv, task: classify, tokens: word, length: 8,
       text_column: review, label_column: sentiment, val_split: 0.25}
model:
  - {type: Embedding, num_embeddings: auto, embedding_dim: 8, padding_idx: 0}
  - Flatten
  - {type: Linear, in_features: auto, out_features: auto}
loss: cross_entropy
optimizer: {type: Adam, lr: 0.05}
train: {epochs: 8, batch_size: 16}
"""


@pytest.mark.slow
def test_classify_trains_from_the_config_and_predicts_class_names(capsys, tmp_path):
    from test_cli_helpers import agrad

    _reviews(tmp_path / "reviews.csv", 200, seed=0)
    (tmp_path / "c.yaml").write_text(CLASSIFY_CONFIG)
    runs = str(tmp_path / "runs")
    code, out, err = agrad(capsys, "train", str(tmp_path / "c.yaml"), "--runs-dir", runs)
    assert code == 0, out + err
    (run,) = [str(p) for p in (tmp_path / "runs").iterdir()]
    with open(os.path.join(run, "data_state.json"), encoding="utf-8") as fh:
        state = json.load(fh)["state"]
    assert state["classes"] == ["neg", "pos"] and state["vocab"][:2] == ["<pad>", "<unk>"]
    with open(os.path.join(run, "metrics.jsonl"), encoding="utf-8") as fh:
        assert json.loads(fh.read().splitlines()[-1])["val_acc"] >= 0.95
    new = tmp_path / "new.csv"
    new.write_text("review\na good film.\nthe plot was awful\nzzz dull\n")
    code, _, err = agrad(capsys, "predict", run, "--input", str(new), "-o", str(tmp_path / "p.csv"))
    assert code == 0, err
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0].startswith("pred,class,")
    assert [line.split(",")[1] for line in lines[1:]] == ["pos", "neg", "neg"]
    _reviews(tmp_path / "more.csv", 40, seed=1)
    code, out, err = agrad(capsys, "eval", run, "--data", str(tmp_path / "more.csv"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["samples"] == 40 and doc["test_acc"] >= 0.95


# ------------------------------------------------------------ streaming and memory-mapped ids
def _small_chunks(monkeypatch, chunk_bytes: int, step_tokens: int = 3) -> None:
    """Read texts ``chunk_bytes`` at a time and pass over ids ``step_tokens`` at a time, so
    every boundary case of a small text is crossed."""
    from autogradcli.data.text import files, stream

    monkeypatch.setattr(files, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(stream, "STEP_TOKENS", step_tokens)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_characters_split_between_reads_are_joined(tmp_path, monkeypatch, chunk):
    # 1-, 2-, 3- and 4-byte characters and a BOM; the oracle is Python's whole-file decode
    raw = "\ufeffaé€𝄞\nΣx é".encode()
    _small_chunks(monkeypatch, chunk)
    src = _kind(_write(tmp_path / "t.txt", raw), block_size=1).read()
    assert src.pieces == raw.decode("utf-8-sig")


@pytest.mark.parametrize("chunk", [1, 2, 3, 4, 7, 1 << 20])
@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"ab\ncd\xffe\n", "line 2, byte offset 5: byte 0xff"),
        (b"\xef\xbb\xbfa\n\xe9\n", "line 2, byte offset 5: byte 0xe9"),  # BOM bytes counted
        (b"ok\n\xc3", "line 2, byte offset 3: byte 0xc3"),  # cut inside the last character
        (b"a\xe2\x82x\n", "line 1, byte offset 1: byte 0xe2"),  # a 3-byte start, then 'x'
    ],
)
def test_bad_bytes_are_located_whatever_the_reads(tmp_path, monkeypatch, chunk, raw, where):
    _small_chunks(monkeypatch, chunk)
    path = _write(tmp_path / "bad.txt", raw)
    with pytest.raises(DataError) as err:
        _kind(path, block_size=1).read()
    assert str(err.value).startswith(f"{path}: {where} is not UTF-8 text")


TRICKY = "ΟΔΟΣ ΟΔΟΣ. Naïve  café—ok!\nIt's fine_2 go\n\nÉTÉ 𝄞x"


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("tokens", ["char", "word"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_tokens_across_reads_are_those_of_the_whole_text(
    tmp_path, monkeypatch, chunk, tokens, lowercase
):
    # the oracle: the tokenizer run on the whole text at once (a final Greek sigma included)
    _small_chunks(monkeypatch, chunk)
    path = _write(tmp_path / "t.txt", TRICKY)
    src = _kind(path, tokens=tokens, lowercase=lowercase, block_size=1).read()
    whole = tokenize(TRICKY, tokens, lowercase)
    assert list(src.pieces) == list(whole)
    if lowercase:
        assert "οδος" in "".join(src.pieces)  # a final sigma, lowercased as one


def test_folder_files_joined_across_reads(tmp_path, monkeypatch):
    _small_chunks(monkeypatch, 2)
    _write(tmp_path / "a.txt", "un é")  # no newline at its end: one is put between files
    _write(tmp_path / "b.txt", "")
    _write(tmp_path / "c.txt", "deux\n")
    _write(tmp_path / "d.txt", "trois")
    src = _kind(tmp_path, tokens="word", block_size=1).read()
    # "un é" "\n" "" "deux\n" "trois": one newline where a file does not end with one
    assert src.pieces == ["un", "é", "\n", "deux", "\n", "trois"]


def test_vocabulary_is_the_training_blocks_only_when_read_in_chunks(tmp_path, monkeypatch):
    # block_size 3: blocks "aéb!" "ccdc" "bé€q"; € and q are only in the validation block
    _small_chunks(monkeypatch, 1, step_tokens=5)
    kind = _kind(_write(tmp_path / "t.txt", "aéb!ccdcbé€q"), block_size=3)
    src = kind.read()
    state = kind.fit(src, [0, 1])
    # counts a:1 é:1 b:1 !:1 c:3 d:1, by falling count then code point
    assert state["vocab"] == ["<unk>", "c", "!", "a", "b", "d", "é"]
    x, y = kind.samples(src, state, [2])[0]
    assert x.tolist() == [4, 6, 0] and y.tolist() == [6, 0, 0]


@pytest.mark.parametrize(("words", "dtype"), [(255, np.uint8), (256, np.uint16)])
def test_ids_take_the_smallest_dtype_of_the_vocabulary(tmp_path, words, dtype):
    # <unk> and `words` distinct words: 256 ids fit uint8, 257 need uint16
    text = " ".join(f"w{i}" for i in range(words))
    kind = _kind(_write(tmp_path / "t.txt", text), tokens="word", block_size=words - 1)
    src = kind.read()
    state = kind.fit(src, [0])
    ids = src.ids(state["vocab"])
    assert ids.dtype == dtype and len(state["vocab"]) == words + 1
    assert [state["vocab"][i] for i in ids] == text.split()


def test_compact_dtype_limits():
    from autogradcli.data.text.idfile import compact_dtype

    assert [compact_dtype(n) for n in (1, 256, 257, 65536, 65537, 2**32)] == [
        np.uint8,
        np.uint8,
        np.uint16,
        np.uint16,
        np.uint32,
        np.uint32,
    ]
    with pytest.raises(ValueError, match="does not fit in uint32"):
        compact_dtype(2**32 + 1)


def test_batches_are_int64_copies_of_the_views(tmp_path):
    from autogradcli.data import DataLoader

    text = "the quick brown fox jumps over the lazy dog\n" * 20
    kind = _kind(_write(tmp_path / "t.txt", text), block_size=8)
    src = kind.read()
    state = kind.fit(src, range(len(src)))
    ds = kind.samples(src, state, [7, 0, 3, 5, 2], train=True)
    batches = list(DataLoader(ds, batch_size=2))
    assert [tuple(x.shape) for x, _ in batches] == [(2, 8), (2, 8), (1, 8)]
    xs = np.concatenate([x.numpy() for x, _ in batches])
    ys = np.concatenate([y.numpy() for _, y in batches])
    assert xs.dtype == ys.dtype == np.int64
    vocab = state["vocab"]
    for k, block in enumerate([7, 0, 3, 5, 2]):
        i = block * 9
        assert "".join(vocab[t] for t in xs[k]) == text[i : i + 8]
        assert "".join(vocab[t] for t in ys[k]) == text[i + 1 : i + 9]


def test_ids_live_in_an_unlinked_temporary_file(tmp_path, monkeypatch):
    import tempfile

    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    kind = _kind(_write(tmp_path / "t.txt", "abcabcabcd"), block_size=4)
    src = kind.read()
    ids = src.ids(kind.fit(src, [0])["vocab"])  # blocks "abcab" "cabcd"
    assert isinstance(ids, np.memmap) and not ids.flags.writeable
    assert ids.tolist() == [1, 2, 3, 1, 2, 3, 1, 2, 3, 0]  # d: in no training block
    assert os.listdir(spool) == []  # unlinked at once
    assert sorted(os.listdir(tmp_path)) == ["spool", "t.txt"]  # nothing beside the data


_RSS_PROGRAM = """
import sys
from autogradcli.data import DataLoader
from autogradcli.data.kinds import KINDS

kind = KINDS["text"](path=sys.argv[1], block_size=64)
source = kind.read()
rows = range(len(source) * 9 // 10)
state = kind.fit(source, rows)
loader = DataLoader(kind.samples(source, state, rows, train=True), batch_size=64)
for k, (x, y) in zip(range(5), loader):
    assert str(x.dtype) == "autogradcli.int64" and tuple(x.shape) == (64, 64)
"""


def _big_text(path, mib: int) -> str:
    """``mib`` MiB of UTF-8 text: lines of common and accented words (some 30 distinct chars)."""
    rng = np.random.default_rng(mib)
    words = [
        "the",
        "a",
        "of",
        "and",
        "to",
        "in",
        "that",
        "it",
        "was",
        "he",
        "she",
        "said",
        "café",
        "naïve",
        "über",
        "ΟΔΟΣ",
        "déjà",
        "ça",
    ]
    encoded = [w.encode("utf-8") for w in words]
    with open(path, "wb") as fh:
        left = mib << 20
        while left > 0:
            line = b" ".join(encoded[i] for i in rng.integers(0, len(words), 20000)) + b".\n"
            fh.write(line)
            left -= len(line)
    return str(path)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_peak_memory_does_not_grow_with_the_text(tmp_path):
    """10 and 50 MiB of text read, fitted, encoded and batched: holding the 40 MiB more as a
    string alone would add 40 MiB (and as int64 ids 320 MiB more); the peak may grow by far
    less."""
    small = peak_rss_kib(_RSS_PROGRAM, _big_text(tmp_path / "small.txt", 10))
    large = peak_rss_kib(_RSS_PROGRAM, _big_text(tmp_path / "large.txt", 50))
    held = 40 << 10
    print(f"peak RSS: {small} KiB for 10 MiB of text, {large} KiB for 50 MiB (held: +{held} KiB)")
    assert large - small < held // 4

"""Stand-ins for the Hugging Face ``datasets``, ``torchtext`` and ``tqdm`` calls that
bentrevett/pytorch-sentiment-analysis's notebooks make: a dataset of dicts with map /
train_test_split / with_format("torch") / unique, the "basic_english" tokenizer,
build_vocab_from_iterator's vocabulary, and tqdm as the identity (no downloads)."""

import collections
import random
import re

import autogradcli as torch


class _Dataset:
    """The few calls of a Hugging Face dataset that the notebook makes."""

    def __init__(self, rows, columns=None):
        self.rows, self.columns = rows, columns

    def map(self, fn, fn_kwargs={}):
        return _Dataset([dict(row, **fn(row, **fn_kwargs)) for row in self.rows])

    def train_test_split(self, test_size):
        rows = list(self.rows)
        random.Random(0).shuffle(rows)
        n_test = int(len(rows) * test_size)
        return {"train": _Dataset(rows[n_test:]), "test": _Dataset(rows[:n_test])}

    def with_format(self, type, columns):
        return _Dataset(self.rows, columns)

    def unique(self, column):
        return sorted(set(row[column] for row in self.rows))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, key):
        if isinstance(key, str):
            return [row[key] for row in self.rows]
        row = self.rows[key]
        if self.columns is None:
            return row
        return {c: torch.tensor(row[c]) for c in self.columns}


class ImdbLike:
    """``datasets`` with ``load_dataset("imdb", split=[...])``: generated reviews, labelled by their
    ``sentiment_words`` (a range) good or bad words among neutral ones."""

    def __init__(self, n_train, n_test, sentiment_words):
        self.sizes = {"train": n_train, "test": n_test}
        self.sentiment_words = sentiment_words

    def load_dataset(self, name, split):
        rng = random.Random(1234)
        good = ["great", "wonderful", "superb", "loved", "excellent", "moving"]
        bad = ["terrible", "awful", "boring", "hated", "dreadful", "dull"]
        filler = ["this", "film", "movie", "the", "plot", "was", "and", "actors", "story", "it", "a"]
        def review(label):
            words = [rng.choice(filler) for _ in range(rng.randint(3, 20))]
            for _ in range(rng.randint(*self.sentiment_words)):
                words.insert(rng.randrange(len(words) + 1), rng.choice(good if label else bad))
            return {"text": " ".join(words).capitalize() + rng.choice([".", "!", "..."]), "label": label}
        return [_Dataset([review(i % 2) for i in range(self.sizes[s])]) for s in split]


class _Vocab:
    def __init__(self, itos):
        self.itos, self.stoi, self.default = itos, {t: i for i, t in enumerate(itos)}, None

    def __getitem__(self, token):
        return self.stoi.get(token, self.default)

    def __len__(self):
        return len(self.itos)

    def set_default_index(self, index):
        self.default = index

    def lookup_indices(self, tokens):
        return [self[t] for t in tokens]

    def get_itos(self):
        return self.itos


class torchtext:
    class data:
        class utils:
            @staticmethod
            def get_tokenizer(name):
                assert name == "basic_english"
                def tokenize(line):
                    line = re.sub(r"([.!?,'])", r" \1 ", line.lower())
                    return line.split()
                return tokenize

    class vocab:
        @staticmethod
        def build_vocab_from_iterator(iterator, min_freq, specials):
            counts = collections.Counter(t for tokens in iterator for t in tokens)
            kept = sorted((t for t, n in counts.items() if n >= min_freq), key=lambda t: (-counts[t], t))
            return _Vocab(list(specials) + kept)


class tqdm:
    @staticmethod
    def tqdm(iterable, desc=None):
        return iterable

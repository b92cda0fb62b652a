"""``agrad generate``: text sampled token by token from a language-model run (``dataset: text``
with ``task: next_token``), with the vocabulary stored in the run folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import EXIT_OK, UserError

__all__ = ["next_token", "run_generate", "sample_tokens"]


def next_token(logits: np.ndarray, temperature: float, top_k: int, rng: Any) -> int:
    """One token id drawn from ``logits`` (1-d, ``-inf`` for banned ids): the most likely at
    temperature 0, else from softmax(logits / temperature) over the ``top_k`` most likely
    (``top_k`` 0: all), with one uniform draw of ``rng``."""
    if temperature == 0:
        return int(np.argmax(logits))
    scaled = logits.astype(np.float64) / temperature
    if 0 < top_k < scaled.shape[0]:
        kth = np.sort(scaled)[-top_k]
        scaled = np.where(scaled < kth, -np.inf, scaled)
    weights = np.exp(scaled - scaled.max())
    cumulative = np.cumsum(weights)
    pick = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(pick, scaled.shape[0] - 1)


def sample_tokens(
    model: Any,
    prompt: Sequence[int],
    length: int,
    block_size: int,
    temperature: float = 0.8,
    top_k: int = 40,
    seed: int = 0,
    banned: Sequence[int] = (),
) -> list[int]:
    """``length`` token ids continuing ``prompt``: each step runs ``model`` on the last
    ``block_size`` ids (a (1, t) batch; the output must be (1, t, vocab)) and draws the next id
    from the last position's logits, never one of ``banned``. The same seed repeats exactly."""
    from ..autograd.grad_mode import no_grad
    from ..tensor.tensor import wrap

    rng = np.random.default_rng(seed)
    params = list(model.parameters())
    device = params[0].device if params else None
    ids = list(prompt)
    out: list[int] = []
    model.eval()
    with no_grad():
        for _ in range(length):
            window = wrap(np.asarray(ids[-block_size:], dtype=np.int64)[None])
            if device is not None and str(device) != "cpu":
                window = window.to(device)
            logits = model(window)
            shape = tuple(getattr(logits, "shape", ()))
            if len(shape) != 3 or shape[:2] != tuple(window.shape):
                raise UserError(
                    f"the model's output for a batch of token ids of shape {tuple(window.shape)} "
                    f"has shape {shape}: agrad generate needs (1, t, vocab), a prediction of "
                    "the next token at every position"
                )
            last = logits.detach().cpu().numpy()[0, -1].astype(np.float64)
            last[list(banned)] = -np.inf
            token = next_token(last, temperature, top_k, rng)
            ids.append(token)
            out.append(token)
    return out


def _language_model_state(run_path: str) -> dict[str, Any]:
    """The run's fitted text state; a located error when ``run_path`` is not a run of
    ``dataset: text`` with ``task: next_token``."""
    import yaml

    from ..trainer.run_dir import DATA_STATE, RESOLVED_CONFIG, RunDir, RunFolderError

    config_file = os.path.join(run_path, RESOLVED_CONFIG)
    if not os.path.isdir(run_path):
        raise UserError(f"no such run folder: {run_path}")
    if not os.path.isfile(config_file):
        raise UserError(f"{run_path} has no {RESOLVED_CONFIG}: not a run folder")
    try:
        with open(config_file, encoding="utf-8") as fh:
            config = yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise UserError(f"cannot read {config_file}: {err}") from None
    data = (config or {}).get("data") if isinstance(config, dict) else None
    data = data if isinstance(data, dict) else {}
    need = "agrad generate samples from a language model: a run of dataset: text, task: next_token"
    if data.get("dataset") != "text":
        raise UserError(f"{config_file}: data.dataset is {data.get('dataset')!r}; {need}")
    if data.get("task", "next_token") != "next_token":
        raise UserError(f"{config_file}: data.task is {data.get('task')!r}; {need}")
    try:
        doc = RunDir(run_path).read_data_state()
    except RunFolderError as err:
        raise UserError(str(err)) from None
    state = (doc or {}).get("state")
    if not isinstance(state, dict) or not isinstance(state.get("vocab"), list):
        raise UserError(f"{run_path} has no vocabulary in its {DATA_STATE}; {need}")
    return state


def run_generate(
    run_path: str,
    prompt: str,
    length: int,
    temperature: float,
    top_k: int,
    seed: int,
    checkpoint: str,
) -> int:
    """Print ``prompt``, ``length`` sampled tokens after it (see ``sample_tokens``) and a
    newline."""
    from ..data.text.tokens import PAD, UNK, detokenize, tokenize
    from ..trainer.load_run import open_run

    if temperature < 0:
        raise UserError(f"--temperature {temperature}: must be >= 0 (0 picks the likeliest)")
    state = _language_model_state(run_path)
    vocab, tokens, block_size = state["vocab"], state["tokens"], int(state["block_size"])
    pieces = tokenize(prompt, tokens, bool(state.get("lowercase")))
    if not pieces:
        raise UserError(f"--prompt {prompt!r} has no {tokens} tokens: give some text to continue")
    index = {t: i for i, t in enumerate(vocab)}
    unknown = sorted({p for p in pieces if p not in index})
    if unknown:
        print(
            f"agrad: note: --prompt {tokens}s not in the run's vocabulary are read as {UNK}: "
            + ", ".join(repr(u) for u in unknown),
            file=sys.stderr,
        )
    try:
        loaded = open_run(run_path, checkpoint)
    except (FileNotFoundError, ValueError) as err:
        raise UserError(str(err)) from None
    ids = [index.get(p, index[UNK]) for p in pieces]
    banned = [index[s] for s in (UNK, PAD) if s in index]
    out = sample_tokens(
        loaded.model, ids, length, block_size, temperature, top_k, seed, banned=banned
    )
    text = detokenize([*pieces, *(vocab[i] for i in out)], tokens)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return EXIT_OK

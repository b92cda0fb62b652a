"""``agrad predict``: a trained run's model on new inputs, predictions to CSV or npz."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

import numpy as np

from .console import console
from .errors import EXIT_OK, UserError

__all__ = ["check_output", "predictions", "run_predict", "same_file"]

_FORMATS = (".csv", ".npz")


def predictions(
    model: Any, loss_fn: Any, task: str, x: Any, batch_size: int, input_shape: tuple = ()
) -> dict[str, Any]:
    """numpy arrays of the predictions of ``model`` on the inputs ``x`` (a Tensor, or a
    Dataset of inputs read by the run's data kind), in batches without a graph: ``pred``
    (class indices) and ``prob`` (N, C) for classification (softmax of the outputs for
    CrossEntropyLoss, exp for NLLLoss's log-probabilities, sigmoid for BCEWithLogitsLoss, the
    outputs for BCELoss); ``pred`` (the outputs) for regression."""
    from ..autograd.grad_mode import no_grad

    outs = []
    model.eval()
    with no_grad():
        for batch in _batches(x, batch_size, input_shape):
            outs.append(model(batch).detach().cpu().numpy())
    out = np.concatenate(outs) if outs else np.zeros((0,), np.float32)
    if task != "classification":
        return {"pred": out}
    name = type(loss_fn).__name__
    if name == "CrossEntropyLoss":
        shifted = out - out.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        prob = e / e.sum(axis=1, keepdims=True)
    elif name == "NLLLoss":
        prob = np.exp(out)
    elif name == "BCEWithLogitsLoss":
        prob = 1.0 / (1.0 + np.exp(-out))
    else:
        prob = out
    prob = prob.astype(np.float32)
    if prob.ndim == 2 and prob.shape[1] > 1 and name in ("CrossEntropyLoss", "NLLLoss"):
        return {"pred": prob.argmax(axis=1).astype(np.int64), "prob": prob}
    return {"pred": (prob > 0.5).astype(np.int64), "prob": prob}


def _batches(x: Any, batch_size: int, input_shape: tuple) -> Any:
    """The input batches of ``x`` (a Tensor or a Dataset of inputs; a sample that is a 1-tuple
    is unwrapped), each reshaped to the model's sample shape when only the layout differs."""
    from ..data import DataLoader
    from ..tensor.tensor import Tensor

    if isinstance(x, Tensor):
        batches: Any = (x[i : i + batch_size] for i in range(0, int(x.shape[0]), batch_size))
    else:
        batches = DataLoader(x, batch_size=batch_size)
    for batch in batches:
        if isinstance(batch, (tuple, list)) and len(batch) == 1:
            batch = batch[0]
        yield _fit_shape(batch, input_shape)


def _fit_shape(x: Any, input_shape: tuple) -> Any:
    """``x`` reshaped to the model's sample shape when only the layout differs (a CSV row of
    64 values for (1, 8, 8) digits); a UserError when the sizes differ."""
    from ..tensor.tensor import Tensor

    if not isinstance(x, Tensor) or not input_shape or tuple(x.shape[1:]) == input_shape:
        return x
    if int(np.prod(x.shape[1:])) != int(np.prod(input_shape)):
        raise _ShapeError(
            f"samples of shape {tuple(x.shape[1:])} do not fit the model, which was "
            f"trained on samples of shape {input_shape}"
        )
    return x.reshape(int(x.shape[0]), *input_shape)


class _ShapeError(ValueError):
    """Inputs whose sample size is not the model's."""


def _write_csv(path: str, preds: dict[str, Any]) -> None:
    """The predictions as CSV: ``name`` (when the inputs have names other than their row
    numbers), ``pred``, ``class`` (the class's name, when the run knows them), ``prob_i``."""
    pred, prob = preds["pred"], preds.get("prob")
    n = pred.shape[0]
    pred2 = pred.reshape(n, -1)
    names = ["pred"] if pred2.shape[1] == 1 else [f"pred_{i}" for i in range(pred2.shape[1])]
    cols = [pred2]
    if "class" in preds:
        names.append("class")
        cols.append(preds["class"].reshape(n, -1))
    if "name" in preds:
        names.insert(0, "name")
        cols.insert(0, preds["name"].reshape(n, -1))
    if prob is not None:
        prob2 = prob.reshape(n, -1)
        names += [f"prob_{i}" for i in range(prob2.shape[1])]
        cols.append(prob2)
    buf = io.StringIO()
    buf.write(",".join(names) + "\n")
    for i in range(n):
        cells = []
        for block in cols:
            for v in block[i]:
                cells.append(_cell(v, block.dtype))
        buf.write(",".join(cells) + "\n")
    from .._utils.atomic import atomic_write_text

    atomic_write_text(path, buf.getvalue())


def _cell(value: Any, dtype: Any) -> str:
    """One CSV cell: an integer, a float as numpy prints it, or a quoted string when needed."""
    if dtype.kind in "iu":
        return str(int(value))
    if dtype.kind in "OU":
        text = str(value)
        if any(c in text for c in ',"\n\r'):
            text = '"' + text.replace('"', '""') + '"'
        return text
    return str(dtype.type(value))


def same_file(output: str, input_path: str) -> bool:
    """Whether ``output`` is the file ``input_path`` (by path, ``..``, symlink or hard link)."""
    same = os.path.realpath(output) == os.path.realpath(input_path)
    if not same and os.path.exists(output):
        with contextlib.suppress(OSError):  # the input may be missing: reported later
            same = os.path.samefile(output, input_path)
    return same


def check_output(
    output: str,
    input_path: str,
    overwrite: bool,
    flag: str = "--output",
    ending: str = ".csv or .npz",
) -> None:
    """Refuse an ``output`` that is the input file (``same_file``), a folder, under a missing
    folder or a file, or (without ``overwrite``) an existing file."""
    if same_file(output, input_path):
        raise UserError(
            f"{flag} {output} is the --input file {input_path}: writing the predictions there "
            f"would destroy the inputs; give another {flag}"
        )
    if os.path.isdir(output):
        raise UserError(f"{flag} {output} is a folder: give a file name ending in {ending}")
    if os.path.lexists(output) and not overwrite:
        other = " (or give --output FILE)" if flag != "--output" else ""
        raise UserError(f"{flag} {output} already exists: pass --overwrite to replace it{other}")
    parent = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(parent):
        what = "is not a folder" if os.path.exists(parent) else "does not exist"
        raise UserError(f"{flag} {output}: {parent} {what}")


def _write(output: str, preds: dict[str, Any]) -> None:
    """Write ``preds`` to ``output`` atomically; a failure names ``output``, not the temporary
    file it was being written to (which is removed)."""
    from .._utils.atomic import atomic_write_bytes

    try:
        if output.lower().endswith(".npz"):
            buf = io.BytesIO()
            np.savez(
                buf, **{k: v.astype(str) if v.dtype == object else v for k, v in preds.items()}
            )
            atomic_write_bytes(output, buf.getvalue())
        else:
            _write_csv(output, preds)
    except OSError as err:
        raise UserError(f"cannot write --output {output}: {err.strerror or err}") from None


def _label(preds: dict[str, Any], exp: Any, source: Any) -> None:
    """Add ``class`` (the predicted classes' names, when the run's data kind knows them) and
    ``name`` (the inputs' names, when they are not just row numbers) to ``preds``."""
    kind, state = exp.data_kind, (exp.data_state or {}).get("state", {})
    classes = kind.class_names(state) if "prob" in preds else None
    pred = preds["pred"]
    if classes and pred.ndim == 1 and (pred < len(classes)).all():
        preds["class"] = np.asarray([classes[int(i)] for i in pred], dtype=object)
    names = kind.names(source)
    if len(names) == len(pred) and names != [str(i + 1) for i in range(len(names))]:
        preds["name"] = np.asarray(names, dtype=object)


def run_predict(
    run_path: str, input_path: str, output: str | None, checkpoint: str, overwrite: bool = False
) -> int:
    from ..trainer.load_run import open_run
    from .eval_cmd import inputs_from_file

    if output is not None:
        if os.path.splitext(output)[1].lower() not in _FORMATS:
            raise UserError(f"--output {output}: the file must end in .csv or .npz")
        check_output(output, input_path, overwrite)
    try:
        loaded = open_run(run_path, checkpoint)
    except (FileNotFoundError, ValueError) as err:
        raise UserError(str(err)) from None
    exp = loaded.experiment
    if output is None:
        stem = os.path.splitext(os.path.basename(input_path))[0]
        output = loaded.run.file(os.path.join("predict", f"{checkpoint}-{stem}.csv"))
        os.makedirs(os.path.dirname(output), exist_ok=True)
        check_output(output, input_path, overwrite, flag="the default output")
    source, inputs = inputs_from_file(exp, input_path)
    try:
        preds = predictions(
            loaded.model,
            exp.loss_fn,
            exp.task,
            inputs,
            exp.train.batch_size,
            tuple(exp.input_shape),
        )
    except _ShapeError as err:
        raise UserError(f"{input_path}: {err}") from None
    except Exception as err:
        raise UserError(f"the model cannot run on {input_path}: {err}") from None
    _label(preds, exp, source)
    _write(output, preds)
    kind = "classes and probabilities" if "prob" in preds else "values"
    console().print(
        f"{preds['pred'].shape[0]} predictions ({kind}) of the {checkpoint} checkpoint "
        f"(epoch {loaded.epoch}) written to {output}",
        markup=False,
    )
    return EXIT_OK

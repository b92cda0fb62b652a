"""``agrad export``: a trained run's model as ONNX, safetensors or a PyTorch state dict file.

The model is rebuilt and loaded as ``agrad eval``/``predict`` do (``trainer.load_run``); the
file is written next to its destination and renamed into place, so a failure leaves any
existing file as it was.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

from .._utils.atomic import default_file_mode
from .console import console
from .errors import EXIT_OK, UserError

__all__ = ["FORMATS", "export_format", "run_export"]

# format -> the file endings it is guessed from when --format is not given
FORMATS = {"onnx": (".onnx",), "safetensors": (".safetensors",), "torch": (".pt", ".pth", ".bin")}


def _run_files(run_path: str) -> list[str]:
    """The run's own files (its configs, records and checkpoints): never an export's output."""
    from ..trainer import run_dir as R
    from ..trainer.init_from import INIT_FROM_FILE

    names = [R.CONFIG, R.RESOLVED_CONFIG, R.DATA_STATE, R.SUMMARY, R.METRICS_JSONL]
    names += [R.METRICS_CSV, R.MODEL_TXT, INIT_FROM_FILE]
    names += [os.path.join(R.CHECKPOINTS, c) for c in ("best", "last")]
    return [os.path.join(run_path, n) for n in names]


def export_format(fmt: str | None, output: str) -> str:
    """``fmt``, or the format ``output``'s ending names; a UserError for neither."""
    endings = ", ".join(f"{e} ({f})" for f, es in FORMATS.items() for e in es)
    if fmt is not None:
        if fmt not in FORMATS:
            raise UserError(f"--format {fmt}: expected one of {', '.join(FORMATS)}")
        return fmt
    ext = os.path.splitext(output)[1].lower()
    for name, ends in FORMATS.items():
        if ext in ends:
            return name
    raise UserError(f"--output {output}: give --format, or a file ending in {endings}")


def _check_output(output: str, run_path: str, checkpoint_file: str, overwrite: bool) -> None:
    """Refuse an output that is one of the run's files or the checkpoint read, then predict's
    checks (a folder, a missing parent, an existing file without ``overwrite``)."""
    from .predict_cmd import check_output, same_file

    for path in _run_files(run_path):
        if same_file(output, path):
            name = os.path.relpath(path, run_path)
            raise UserError(
                f"--output {output} is the run's {name}: exporting there would destroy the run; "
                "give another --output"
            )
    if same_file(output, checkpoint_file):
        raise UserError(
            f"--output {output} is the --checkpoint file: exporting there would destroy it; "
            "give another --output"
        )
    ending = " or ".join(e for es in FORMATS.values() for e in es)
    check_output(output, checkpoint_file, overwrite, ending=ending)


def _state(model: Any) -> dict[str, Any]:
    return {k: v.detach() for k, v in model.state_dict().items()}


def _metadata(loaded: Any) -> dict[str, str]:
    """safetensors string metadata: the resolved config, the class names and data state."""
    exp = loaded.experiment
    state = (exp.data_state or {}).get("state", {})
    classes = exp.data_kind.class_names(state) if exp.data_kind is not None else None
    return {
        "format": "pt",
        "agrad.config": exp.config.to_yaml(),
        "agrad.classes": json.dumps(classes),
        "agrad.data_state": json.dumps(exp.data_state),
        "agrad.checkpoint": str(loaded.checkpoint),
        "agrad.epoch": str(loaded.epoch),
    }


def _write_safetensors(loaded: Any, path: str) -> None:
    state, meta = _state(loaded.model), _metadata(loaded)
    try:
        from ..serialization import save_safetensors  # type: ignore[attr-defined]
    except ImportError:
        from safetensors.numpy import save_file

        save_file({k: v.numpy().copy() for k, v in state.items()}, path, metadata=meta)
        return
    save_safetensors(state, path, metadata=meta)


def _write_torch(loaded: Any, path: str) -> None:
    from ..serialization import save_torch  # type: ignore[attr-defined]

    save_torch(_state(loaded.model), path)


def example_input(exp: Any) -> Any:
    """A batch of two zeros samples of the run's input shape and dtype (features for tables,
    CxHxW for images, token ids for text)."""
    from ..config.build_data import stored_sample
    from ..tensor.factory import zeros

    if "sample" in (exp.data_state or {}):
        x = stored_sample(exp.data_state)[0][:2]
    else:  # a run made before data_state.json held the build batch's dtype
        x = zeros(2, *exp.input_shape)
    return x


def _write_onnx(loaded: Any, path: str) -> None:
    from .. import onnx  # type: ignore[attr-defined]

    exp = loaded.experiment
    x = example_input(exp)
    onnx.export(
        loaded.model,
        (x,),
        path,
        input_names=["input"],
        output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
    )


_WRITERS: dict[str, Callable[[Any, str], None]] = {
    "onnx": _write_onnx,
    "safetensors": _write_safetensors,
    "torch": _write_torch,
}
_NEEDS = {
    "onnx": "autogradcli.onnx (and the `onnx` package)",
    "safetensors": "the `safetensors` package",
    "torch": "autogradcli.serialization.save_torch",
}


def _write(fmt: str, loaded: Any, output: str) -> None:
    """Write ``output`` through a temporary file in its folder, renamed over it at the end."""
    folder = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=os.path.splitext(output)[1], dir=folder)
    os.close(fd)
    try:
        try:
            _WRITERS[fmt](loaded, tmp)
        except ImportError as err:
            raise UserError(f"--format {fmt} needs {_NEEDS[fmt]}: {err}") from None
        except OSError as err:
            raise UserError(f"cannot write --output {output}: {err.strerror or err}") from None
        os.chmod(tmp, default_file_mode(output))  # mkstemp's 0600 would keep others out
        os.replace(tmp, output)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def run_export(
    run_path: str, checkpoint: str, fmt: str | None, output: str, overwrite: bool = False
) -> int:
    """``agrad export``: load the run's ``checkpoint`` and write its model to ``output``."""
    from ..trainer.load_run import open_run

    fmt = export_format(fmt, output)
    ckpt_file = checkpoint if checkpoint not in ("best", "last") else ""
    if ckpt_file:
        ckpt_file = os.path.abspath(ckpt_file)
    else:
        ckpt_file = os.path.join(run_path, "checkpoints", checkpoint)
    _check_output(output, run_path, ckpt_file, overwrite)
    try:
        loaded = open_run(run_path, checkpoint, overrides=["device=cpu"])  # files are CPU data
    except (FileNotFoundError, ValueError) as err:
        raise UserError(str(err)) from None
    except RuntimeError as err:  # a checkpoint file of another model
        raise UserError(f"--checkpoint {checkpoint}: {err}") from None
    _write(fmt, loaded, output)
    n = sum(1 for _ in loaded.model.state_dict())
    what = (
        f"the {checkpoint} checkpoint (epoch {loaded.epoch})"
        if checkpoint in ("best", "last")
        else f"the weights of {checkpoint}"
    )
    console().print(
        f"exported {what} of {run_path} as {fmt} ({n} tensors) to {output}", markup=False
    )
    return EXIT_OK

"""Write the README's sample outputs from real runs, so none can drift from what agrad prints.

    python docs/readme_samples.py          # rewrite every sample block of README.md
    python docs/readme_samples.py --check  # exit 1, naming the blocks, if one differs

Each block is the fenced code between ``<!-- sample:NAME ... -->`` and ``<!-- sample:end -->``.
SESSIONS says which commands make it: each session runs in a fresh folder holding ``configs/``
and ``docs/samples/``'s files, one command at a time, as a user would type them.
``tests/test_readme_samples.py`` checks every block against a fresh run.

What varies from run to run is normalised: the folder's own path, the run folder's time stamp
and id (shown as RUN_NAME), epoch times (``time 0.01s``), and ``agrad runs``'s start time and
wall time. Everything else (losses, accuracies, tables, messages) is printed as it is.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(REPO, "README.md")
FILES = os.path.join(REPO, "docs", "samples")
BEGIN = "<!-- sample:{} (written by `python docs/readme_samples.py`; do not edit) -->"
END = "<!-- sample:end -->"
RUN_NAME = "digits-mlp-20261124-004050-ff8b92"  # the run folder's name as the README shows it
RUN = f"runs/{RUN_NAME}"  # how a command's ``RUN`` (the session's run folder) is shown


@dataclass(frozen=True)
class Step:
    """One command of a session, and where its output goes."""

    command: str  # as typed; ``RUN`` stands for the session's run folder
    block: str  # the README block that shows it
    prompt: bool = True  # show ``$ command`` before the output (else the output alone)
    keep: int | None = None  # show only the output's last ``keep`` lines, after ``...``
    start: str | None = None  # show only from the line that starts with this...
    count: int = 1  # ... and the ``count - 1`` lines after it


SESSIONS: dict[str, list[Step]] = {
    "main-job": [Step("agrad train configs/digits_mlp.yaml", "train", prompt=False)],
    "config-errors": [
        Step("agrad train bad.yaml", "config-errors"),
        Step("echo $?", "config-errors"),
        Step("agrad train reg.yaml", "regression"),
    ],
    "test-data": [
        Step("agrad train configs/digits_mlp.yaml --set data.test_split=0.2", "test-split", keep=4),
        Step(
            "python -c \"import json; print(json.load(open('RUN/summary.json'))['test'])\"",
            "test-split",
        ),
        Step("agrad eval RUN", "eval"),
        Step("agrad eval RUN --checkpoint last", "eval"),
        Step("agrad predict RUN --input new_digits.csv --output preds.csv", "predict"),
        Step("cut -c1-100 preds.csv", "predict"),
        Step("agrad runs", "runs"),
    ],
    "gradcheck": [
        Step(
            "agrad gradcheck my_functions.py:AddBias --input x=4,3 --input b=3 --show 3",
            "gradcheck-fail",
        ),
        Step("echo $?", "gradcheck-fail"),
        Step("agrad gradcheck my_functions.py:Relu", "gradcheck-kinks"),
    ],
    "inspect": [Step("agrad inspect configs/digits_cnn.yaml", "inspect")],
    "run-failures": [
        Step("agrad train diverge.yaml", "diverged", prompt=False, start="run failed"),
        Step("agrad train userfn.yaml", "user-error", prompt=False, start="run failed", count=3),
    ],
}


def run_session(name: str) -> dict[str, str]:
    """Run session ``name`` in a fresh folder; its blocks' texts by block name."""
    with tempfile.TemporaryDirectory(prefix="agrad-sample-") as work:
        shutil.copytree(os.path.join(REPO, "configs"), os.path.join(work, "configs"))
        for entry in os.listdir(FILES):
            shutil.copy(os.path.join(FILES, entry), work)
        _write_new_digits(os.path.join(work, "new_digits.csv"))
        env = dict(os.environ, COLUMNS="160", NO_COLOR="1", AGRAD_DEBUG="")
        env["PYTHONPATH"] = os.pathsep.join([REPO, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env.pop("FORCE_COLOR", None)
        blocks: dict[str, list[str]] = {}
        run_dir, rc = None, 0
        for step in SESSIONS[name]:
            if step.command == "echo $?":
                out = f"{rc}\n"
            else:
                command = step.command.replace("RUN", f"runs/{run_dir}" if run_dir else RUN)
                done = subprocess.run(
                    _executable(command),
                    shell=True,
                    cwd=work,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=300,
                )
                out, rc = done.stdout, done.returncode
                if run_dir is None and os.path.isdir(os.path.join(work, "runs")):
                    run_dir = next(iter(os.listdir(os.path.join(work, "runs"))), None)
            lines = normalise(out, work, run_dir).split("\n")
            if step.start is not None:
                first = next(i for i, line in enumerate(lines) if line.startswith(step.start))
                lines = lines[first : first + step.count]
            if step.keep is not None and len(lines) > step.keep:
                lines = ["...", *lines[-step.keep :]]
            shown = [f"$ {step.command.replace('RUN', RUN)}"] if step.prompt else []
            blocks.setdefault(step.block, []).extend(shown + lines)
        return {block: "\n".join(lines) for block, lines in blocks.items()}


def _executable(command: str) -> str:
    """``command`` as run: ``agrad`` and ``python`` are this interpreter (the checkout's code)."""
    python = f'"{sys.executable}"'
    if command.startswith("agrad "):
        return f"{python} -m autogradcli.cli {command[len('agrad ') :]}"
    if command.startswith("python "):
        return f"{python} {command[len('python ') :]}"
    return command


def _write_new_digits(path: str) -> None:
    """Three rows of 64 grey levels in [0, 1] (bundled digits 100-102), the predict sample's input."""
    import numpy as np

    with np.load(os.path.join(REPO, "autogradcli", "data", "files", "digits.npz")) as npz:
        x = npz["images"][100:103].reshape(3, 64) / 16.0
    np.savetxt(path, x, fmt="%.4g", delimiter=",")


def normalise(text: str, work: str, run_dir: str | None) -> str:
    """``text`` without what varies between runs; trailing blanks and blank ends removed."""
    text = text.replace(work + os.sep, "").replace(work, ".")
    if run_dir:
        text = text.replace(run_dir, RUN_NAME)
    text = re.sub(r"\btime \d+\.\d+s\b", "time 0.01s", text)
    text = re.sub(r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\b", "2026-11-24 00:40:51", text)
    text = re.sub(r"(?<= )\d+\.\ds(?= )", lambda m: "0.6s".rjust(len(m[0])), text)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def read_block(text: str, block: str) -> str | None:
    """The fenced code of README ``text``'s sample ``block``; None when it has no such block."""
    lines = text.split("\n")
    try:
        start = lines.index(BEGIN.format(block))
    except ValueError:
        return None
    end = lines.index(END, start)
    return "\n".join(lines[start + 2 : end - 1])


def replace_block(text: str, block: str, body: str) -> str:
    """README ``text`` with sample ``block``'s fenced code replaced by ``body``."""
    lines = text.split("\n")
    start = lines.index(BEGIN.format(block))
    end = lines.index(END, start)
    return "\n".join(lines[: start + 2] + body.split("\n") + lines[end - 1 :])


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with ``--check``, compare) every sample block; 1 when a check fails."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a diff")
    args = parser.parse_args(argv)
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    stale = []
    for session in SESSIONS:
        for block, body in run_session(session).items():
            if read_block(text, block) is None:
                raise SystemExit(f"README.md has no block {BEGIN.format(block)}")
            if read_block(text, block) != body:
                stale.append(block)
                text = replace_block(text, block, body)
    if args.check:
        print("stale: " + ", ".join(stale) if stale else "every sample is up to date")
        return 1 if stale else 0
    with open(README, "w", encoding="utf-8") as fh:
        fh.write(text)
    print("rewritten: " + (", ".join(stale) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

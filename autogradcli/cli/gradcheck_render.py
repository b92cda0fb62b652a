"""How ``agrad gradcheck`` draws a :class:`FunctionCheckReport` with rich: the checklist, one
table of (output, input) pairs per order, then each failing pair's worst elements and diagnosis
and each pair's kinks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..autograd.function_check_report import FunctionCheckReport, PairResult

__all__ = ["render"]

_MARK = {"pass": "[green]PASS[/green]", "fail": "[red]FAIL[/red]", "skip": "[dim]SKIP[/dim]"}


def _g(v: Any, spec: str = ".3g") -> str:
    if v is None:
        return "-"
    return format(v, spec) if isinstance(v, float) else str(v)


def _pair_table(title: str, pairs: list[PairResult]) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for col, just in (
        ("output", "left"),
        ("w.r.t.", "left"),
        ("max abs err", "right"),
        ("max rel err", "right"),
        ("failed", "right"),
        ("kinks", "right"),
        ("result", "left"),
    ):
        table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    for p in pairs:
        if p.mode == "fast":
            failed, rel = "-", "-"
        else:
            failed, rel = f"{p.n_failed}/{p.n_elements}", _g(p.max_rel_error)
        table.add_row(
            p.output,
            p.input,
            _g(p.max_abs_error),
            rel,
            failed,
            str(p.n_kinks),
            "[green]pass[/green]" if p.ok else "[red]FAIL[/red]",
        )
    return table


def _render_failure(out: Any, p: PairResult, show: int) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    what = "elements of v^T J (v random)" if p.mode == "vjp" else "Jacobian elements"
    out.print(f"[red]{p.output} w.r.t. {p.input}[/red]: {p.n_failed} of {p.n_elements} {what} fail")
    if p.diagnosis:
        out.print(f"  diagnosis: [bold]{escape(p.diagnosis)}[/bold]")
    t = Table(box=box.SIMPLE_HEAD, title="worst elements", title_justify="left")
    for col in ("element", "numerical", "analytical", "difference", "allowed"):
        t.add_column(col, justify="left" if col == "element" else "right", no_wrap=True)
    for w in p.worst[:show]:
        t.add_row(
            escape(w.where),
            _g(w.numerical, ".6g"),
            _g(w.analytical, ".6g"),
            _g(w.difference),
            _g(w.allowed),
        )
    out.print(t)


def render(out: Any, rep: FunctionCheckReport, target: str, show: int) -> None:
    """Draw one Function's report: the checklist, the pair tables, failures and kinks."""
    from rich.markup import escape

    o = rep.options
    out.print(
        f"[bold]gradcheck {escape(rep.function)}[/bold] ({escape(target)}) in float64: "
        f"eps {o.eps:g}, atol {o.atol:g}, rtol {o.rtol:g}"
    )
    parts = []
    for i in rep.inputs:
        if i.shape is not None:
            parts.append(f"{i.name} {tuple(i.shape)}{'' if i.requires_grad else ', no grad'}")
        else:
            parts.append(f"{i.name}={i.value}")
    out.print("inputs: " + escape(", ".join(parts)))
    for c in rep.checks:
        detail = f"  [dim]{escape(c.detail)}[/dim]" if c.detail else ""
        out.print(f"  {_MARK[c.status]}  {escape(c.name)}{detail}")
    for order in (1, 2):
        pairs = [p for p in rep.pairs if p.order == order]
        if not pairs:
            continue
        title = "first order" if order == 1 else "second order (gradients of the gradients)"
        out.print(_pair_table(title, pairs))
        for p in pairs:
            if p.mode == "fast":
                continue
            if not p.ok:
                _render_failure(out, p, show)
            if p.kinks:
                out.print(
                    f"[yellow]{p.output} w.r.t. {p.input}[/yellow]: {p.n_kinks} kink(s) "
                    "(one-sided slopes differ; the function is not differentiable there; "
                    "not counted as failures):"
                )
                for k in p.kinks[:show]:
                    out.print(
                        f"  {escape(k.where)}: left slope {_g(k.left)}, right slope "
                        f"{_g(k.right)}, analytical {_g(k.analytical)}"
                    )
    verdict = "[green]all checks passed[/green]" if rep.ok else "[red]gradcheck FAILED[/red]"
    out.print(verdict)
    out.print()

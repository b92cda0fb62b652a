"""``agrad train --help``'s lists (datasets, losses, optimizers, schedulers, hooks, metrics, train
keys), read from the config's own tables when the help is shown, so the help names exactly what a
config takes."""

from __future__ import annotations

import textwrap

import click
from typer.core import TyperCommand

INDENT = " " * 13  # where a key's description starts in the help's table


def registry_lists() -> dict[str, str]:
    """Placeholder -> the names the config accepts there, wrapped under the help's table."""
    from ..config import registry, schema
    from ..trainer.builtin import BUILTIN_CALLBACKS

    names = {
        "{datasets}": [*schema.DATASETS, "module:fn"],
        "{losses}": sorted(registry.loss_types()),
        "{shorthands}": list(registry.SHORTHANDS),
        "{optimizers}": sorted(registry.optimizer_types(), key=str.lower),
        "{schedulers}": sorted(registry.scheduler_types()),
        "{hooks}": list(BUILTIN_CALLBACKS),
        "{metrics}": list(registry.METRICS),
        "{train}": list(schema.TRAIN_DEFAULTS),
    }
    sep = {"{datasets}": "|", "{optimizers}": "|"}
    return {key: _wrap(sep.get(key, ", ").join(items)) for key, items in names.items()}


def _wrap(text: str) -> str:
    """``text`` broken after ``|`` or ``,`` into lines of the help's width, indented to its
    column (click keeps a ``\\b`` paragraph's lines as they are)."""
    lines = textwrap.wrap(text.replace("|", "| "), width=76 - len(INDENT), break_on_hyphens=False)
    return f"\n{INDENT}".join(line.replace("| ", "|") for line in lines)


class TrainCommand(TyperCommand):
    """``train``'s command: its help's placeholders are filled from the config tables only when
    the help is printed, so ``agrad --help`` and training itself do not pay for it."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Fill the placeholders, then format as click does."""
        for key, value in registry_lists().items():
            self.help = (self.help or "").replace(key, value)
        super().format_help_text(ctx, formatter)

"""The `headroom` command: one Typer app; each command group lives in `headroom.commands.<name>`.

A command module exposes `register(app: typer.Typer) -> None`; modules are discovered, so adding a command
group never edits this file.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

import headroom.commands as commands_pkg

app = typer.Typer(
    name="headroom",
    help="Headroom: a storage advisor for TiKV on AWS EC2 + EBS.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands_pkg.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


_register_commands()


def main() -> None:
    """Run the headroom command line."""
    app(prog_name="headroom")


if __name__ == "__main__":  # pragma: no cover
    main()

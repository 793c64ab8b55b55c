"""The `headroom` command: one Typer app; each command group lives in `headroom.commands.<name>`.

A command module exposes `register(app: typer.Typer) -> None`; `COMMAND_MODULES` lists them (an explicit
list: a new command group adds its module here).
"""

from __future__ import annotations

import typer

from headroom.commands import advise, burst, catalog, db, patch, server, simulate, snapshot

app = typer.Typer(
    name="headroom",
    help="Headroom: a storage advisor for TiKV on AWS EC2 + EBS.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


COMMAND_MODULES = (advise, burst, catalog, db, patch, server, simulate, snapshot)


def _register_commands() -> None:
    for module in COMMAND_MODULES:
        module.register(app)


_register_commands()


def main() -> None:
    """Run the headroom command line."""
    app(prog_name="headroom")


if __name__ == "__main__":  # pragma: no cover
    main()

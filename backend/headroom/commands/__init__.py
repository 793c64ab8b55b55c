"""Command groups of the `headroom` CLI; each module exposes `register(app)` (see headroom.cli)."""

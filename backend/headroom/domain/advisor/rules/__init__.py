"""Advisor rules, one module per family; each module exposes `RULES: Sequence[Rule]` (see README.md)."""

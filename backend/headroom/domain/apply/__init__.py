"""Apply, verify, roll back: the pure plan of an apply and the guards that watch it (docs/apply.md)."""

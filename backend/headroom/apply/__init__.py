"""Apply, verify, roll back (docs/apply.md): the opt-in, the write role's templates and the plans."""

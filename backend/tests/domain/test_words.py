"""Words a user reads instead of codes."""

from __future__ import annotations


def test_every_audit_action_the_code_records_reads_in_words() -> None:
    """Each action passed to accounts.service.audit as a literal (and the apply actions built from a status) says
    its subject by name and its verb without underscores or dots."""
    import re
    from pathlib import Path

    from headroom.domain.words import AUDIT_SUBJECTS, audit_action_text

    root = Path(__file__).resolve().parents[3] / "backend" / "headroom"
    literal = re.compile(r'audit\(\s*[^"\n]*?,\s*"([a-z_]+\.[a-z_]+)"')
    actions = {m.group(1) for p in root.rglob("*.py") for m in literal.finditer(p.read_text())}
    actions |= {f"apply.plan_{s}" for s in ("approved", "rejected", "cancelled")}
    assert len(actions) >= 30, sorted(actions)
    for action in actions:
        assert action.split(".")[0] in AUDIT_SUBJECTS, action
        text = audit_action_text(action)
        assert "_" not in text and "." not in text, (action, text)
    assert audit_action_text("apply.step_rolled_back") == "Apply: step rolled back"
    assert audit_action_text("aws_connection.created") == "AWS connection: created"
    assert audit_action_text("auth.login") == "Signed in"

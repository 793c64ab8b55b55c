"""Every number the advisor writes for a person goes through the one formatter (docs/number-formats.md).

A finding's title, why, condition, notes and fix texts are read beside the chart, the table and the weekly email,
which write numbers with `headroom.domain.units.format_quantity` (half up on the shortest decimal, digits by
magnitude per unit). A Python format spec (`{x:,.0f} IOPS`, `{x:.1f} ms`, `{x:.0%}`) rounds half to even on the
binary value with its own digits, so a title could say "112 MiB/s" where the chart says "113 MiB/s" for the same
112.5. This test reads the advisor's source with `ast` and names, file:line, every number formatted with a format
spec: in an f-string, a `str.format` template or a `%` template.

An entry of ALLOWED is a site where a spec is right; each says why. Dates (`{t:%Y-%m-%d %H:%M}`) are not numbers
and are never reported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ADVISOR = Path(__file__).resolve().parents[3] / "headroom" / "domain" / "advisor"
REPO = ADVISOR.parents[3]
DOMAIN = ADVISOR.parent
# The advisor, and the domain modules whose texts reach a person beside it: forecasts' ceilings and methods (charts,
# projections, findings) and the alerts' sentences (notify).
SCANNED = [*sorted(ADVISOR.rglob("*.py")), *sorted((DOMAIN / "forecast").rglob("*.py")), DOMAIN / "notify.py"]

# A numeric format spec: optional sign, grouping and precision, then a float (or general/percent) type, or
# grouping alone (`{n:,}`, a number written outside the table). Dates use %-directives and never match.
NUMERIC_SPEC = re.compile(r"^(.?[<>=^])?[+\- ]?#?0?\d*(?P<group>[,_])?(\.(\d+|\{\}))?(?P<type>[eEfFgG%n])?$")
PERCENT_TEMPLATE = re.compile(r"%[-+ #0]*\d*(\.\d+)?[dieEfFgG]")
FORMAT_TEMPLATE = re.compile(r"\{[^{}:]*:([^{}]*)\}")

# (path relative to the repository, line) -> why a format spec is right there. Keep it short: a number a person
# reads goes through units.format_quantity, format_share, format_usd_change, format_days or
# format_duration_words.
ALLOWED: dict[tuple[str, int], str] = {}


def _is_numeric_spec(spec: str) -> bool:
    match = NUMERIC_SPEC.match(spec)
    return match is not None and bool(match.group("group") or match.group("type"))


def _spec_text(spec: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in spec.values)


def numeric_format_sites(path: Path) -> list[tuple[int, str]]:
    """Return (line, what) for every number `path` formats with a Python format spec."""
    tree = ast.parse(path.read_text(), filename=str(path))
    sites: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):
            spec = _spec_text(node.format_spec)
            if _is_numeric_spec(spec):
                sites.append((node.lineno, f"{{{ast.unparse(node.value)}:{spec}}}"))
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
            and PERCENT_TEMPLATE.search(node.left.value)
        ):
            sites.append((node.lineno, f"{node.left.value!r} % ..."))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            specs = [s for s in FORMAT_TEMPLATE.findall(node.func.value.value) if _is_numeric_spec(s)]
            if specs:
                sites.append((node.lineno, f"{node.func.value.value!r}.format(...)"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "format"
            and len(node.args) == 2
            and isinstance(node.args[1], ast.Constant)
            and _is_numeric_spec(str(node.args[1].value))
        ):
            sites.append((node.lineno, f"format(..., {node.args[1].value!r})"))
    return sorted(set(sites))


def test_advisor_texts_format_numbers_with_the_one_formatter() -> None:
    found: list[str] = []
    allowed_seen: set[tuple[str, int]] = set()
    for path in SCANNED:
        rel = path.relative_to(REPO).as_posix()
        for line, what in numeric_format_sites(path):
            if (rel, line) in ALLOWED:
                allowed_seen.add((rel, line))
                continue
            found.append(f"{rel}:{line}: {what}")
    assert not found, (
        "numbers formatted with a Python format spec (half to even, digits of their own); write them with "
        "headroom.domain.units.format_quantity / format_share / format_usd_change / format_days / "
        "format_duration_words (docs/number-formats.md):\n" + "\n".join(found)
    )
    assert allowed_seen == set(ALLOWED), f"stale ALLOWED entries: {sorted(set(ALLOWED) - allowed_seen)}"


def test_the_scan_finds_each_kind_of_numeric_format(tmp_path: Path) -> None:
    """The checker is not blind: each kind of spec the advisor used is reported, dates and plain values are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "x = 1.0\n"
        "a = f'{x:,.0f} IOPS'\n"
        "b = f'{x:.1f} ms'\n"
        "c = f'{x:.0%}'\n"
        "d = f'{x:g} GiB'\n"
        "e = f'{x:+,.2f} USD/month'\n"
        "g = f'{x:,} IOPS'\n"
        "h = '%.1f ms' % x\n"
        "i = '{:.2f}'.format(x)\n"
        "j = format(x, '.3g')\n"
        "k = f'{x:.{2}f}'\n"
        "import datetime\n"
        "t = datetime.datetime.now()\n"
        "ok1 = f'{t:%Y-%m-%d %H:%M} UTC'\n"
        "ok2 = f'{x} nodes {x!r}'\n"
        "ok3 = f'{x:>10}'\n"
    )
    lines = [line for line, _ in numeric_format_sites(sample)]
    assert lines == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]


def test_every_allowed_site_says_why() -> None:
    assert all(reason.strip() for reason in ALLOWED.values())

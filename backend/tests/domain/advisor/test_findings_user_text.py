"""What users read in a finding names public documents, never Headroom's internals.

Every example scenario (one day) and the demo fleet (seven days) is advised, and every user-visible text of
every finding is scanned: title, why, notes, sources, the evidence (condition, measures, corroboration,
forecasts, chart labels and reference lines), the impact and every option. Sections of a notebook outside
the repository (a section sign and a number), the numbers the notebook gave its source articles and module or view names ("headroom.forecast.burst",
"derived.counted_iops") must not appear, nor a repository path (docs/...md, backend/, a .py file), a metric id
(`ebs.burst_balance`) or a forecast method's code in parentheses ("(holt)", "(M4)"); identifiers the API uses to
fetch data (a series' metric name, the rule id, the dedup key, a change's key) are not text and are not scanned.
Sources carry a link or name a "How Headroom decides" page by its title.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from advisor_fixtures import SCENARIOS, scenario_findings
from headroom.domain.advisor import Finding
from headroom.domain.references import THRESHOLD_PAGES
from jargon import jargon_in

# In a title or a label any dotted id with an underscore is a metric id, whatever its prefix.
METRIC_ID = re.compile(r"\b[a-z0-9]+\.[a-z0-9]+_[a-z0-9_.]+\b")
# Not text: identifiers the API and the UI use to fetch or match data.
IDENTIFIERS = {"rule", "dedup_key", "entity", "key", "target", "metric", "entity_kind", "entity_id", "labels",
               "primary", "members", "fix", "resolves", "related",
               "kind", "current", "proposed", "window_start", "window_end", "at", "earliest", "latest"}
CASES = [(p.stem, 24.0) for p in sorted(SCENARIOS.glob("*.yaml")) if p.stem != "demo"] + [("demo", 168.0)]


def user_texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Yield (path, text) for every string a user reads in a finding's JSON."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in IDENTIFIERS and not (k == "metric" and path.endswith("impact")):
                continue
            yield from user_texts(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from user_texts(v, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


def leaks(findings: tuple[Finding, ...]) -> list[str]:
    return [
        f"{f.rule} {path}: {text[:160]}"
        for f in findings
        for path, text in user_texts(f.to_dict())
        if jargon_in(text) or (path.endswith((".title", ".label")) and METRIC_ID.search(text))
    ]


def test_the_scan_finds_what_it_looks_for() -> None:
    # The scan is not vacuous: each kind of leak the issue names is caught where it used to be.
    # The notebook's shorthand is built from pieces, so that this file does not itself cite it.
    section, article = "notebook " + "\u00a7" + "1.3", "seed " + "000"
    bad = {
        "sources": [section, article],
        "evidence": {"forecasts": [{"source": "headroom.domain.forecast.burst", "metric_hint": "derived.mibps"}]},
        "metric": "derived.counted_iops",  # an identifier: not scanned
        "notes": ["why: docs/thresholds/burst.md", "see backend/headroom/x", "in rules/burst.py",
                  "ec2.ebs_byte_balance fell to 0%", "fitted on 9 days (holt)", "peaks kept (M4)",
                  "m5.2xlarge -> c5.4xlarge", "gp3 500 GiB, 3,000 IOPS (5.0 ms)"],
    }
    found = [t for _, t in user_texts(bad) if jargon_in(t)]
    assert found == [section, article, "headroom.domain.forecast.burst", "derived.mibps",
                     "why: docs/thresholds/burst.md", "see backend/headroom/x", "in rules/burst.py",
                     "ec2.ebs_byte_balance fell to 0%", "fitted on 9 days (holt)", "peaks kept (M4)"]


@pytest.mark.parametrize(("name", "hours"), CASES, ids=[f"{n}@{h:g}h" for n, h in CASES])
def test_findings_cite_public_documents_only(name: str, hours: float) -> None:
    assert (SCENARIOS / f"{name}.yaml").exists()
    findings = scenario_findings(name, hours)
    assert leaks(findings) == []
    for f in findings:
        # every finding names where its facts come from, and each source is a link or one of our own pages
        assert f.sources, f.rule
        for source in f.sources:
            assert re.search(r"https://|How Headroom decides: ", source), (f.rule, source)


def test_scenarios_exist() -> None:
    assert len(CASES) > 20 and Path(SCENARIOS / "demo.yaml").exists()


DOCS = SCENARIOS.parents[1] / "docs" / "thresholds"


def test_each_threshold_page_is_named_by_its_first_heading() -> None:
    # A source names a "How Headroom decides" page by its title, and the app finds the page by that title: the
    # backend's list of titles is the pages' own first headings, one for every page.
    pages = {p.name: p.read_text().splitlines()[0] for p in sorted(DOCS.glob("*.md")) if p.name != "README.md"}
    assert {name: f"# {title}" for name, title in THRESHOLD_PAGES.items()} == pages


def test_every_threshold_page_cited_exists_and_the_index_lists_it() -> None:
    # A finding resting on Headroom's own threshold cites a "How Headroom decides" page; that page exists and
    # the index (docs/thresholds/README.md) links it.
    docs = DOCS
    index = (docs / "README.md").read_text()
    cited: set[str] = set()
    for name, hours in CASES:
        for f in scenario_findings(name, hours):
            for text in f.sources:
                named = {page for page, title in THRESHOLD_PAGES.items() if f"How Headroom decides: {title}" in text}
                assert named or "https://" in text, (f.rule, text)
                cited |= named
    assert {"volume-ceilings.md", "instance-ebs.md", "cost.md", "raft.md", "titan.md"} <= cited
    for page in sorted(cited):
        assert (docs / page).exists(), page
        assert f"({page})" in index, page

"""The repository stands alone: a reader can follow every citation it makes.

Comments, docstrings and docs cite public pages or pages of this repository (docs/reference/ restates the AWS,
TiKV and PingCAP facts the code relies on, each with its public source). They never cite a notebook outside the
repository, nor a tracker issue by its number: a new maintainer can open neither. Nor do they use the notebook's
shorthand for its sources (nicknames for AWS and PingCAP pages, numbers for the articles Headroom was conceived
from, bare section numbers) or name files kept beside the repository. Every `docs/reference/<page>.md#<heading>`
cited anywhere exists, with that heading, and every relative link of a Markdown page reaches a file (and heading).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

REFERENCE = REPO_ROOT / "docs" / "reference"
# Where citations live: every tracked file under these folders, and the tracked files at the top level.
SCANNED = ("backend", "frontend/src", "docs", "bench", "e2e", "worker", "migrations", "scripts", "examples")

# The private notebook, whatever the path in front of it.
NOTEBOOK = re.compile(r"domain\.md")
# An issue number in any spelling: singular or plural, any case, with or without "#". A link to another project's tracker
# (github.com/owner/repo/issues/482) names its project and stays followable, so it is not matched.
TRACKER_ISSUE = re.compile(r"\bissues?\s*#?\d+", re.IGNORECASE)
# The notebook's shorthand: its nicknames for AWS and PingCAP pages, its numbers for the source articles (any case,
# "seed 000", "seed-000"; or "the seed article"), its sections ("notebook §1.3", or a section sign and a number that
# no document name precedes: "RFC 5321 §4.5.3.2" names its document), and files kept beside the repository (the
# ../shared/ folder, its style guide, its copy of TiKV's alert rules). Cite docs/reference/ or the public page.
SHORTHAND = re.compile(
    r"\b(?:AWSDOC|EC2TYPES|PCDOCS)\b"
    r"|\bseed[ -]?0\d\d\b|\bseed articles?\b"
    r"|\bnotebook\s*\u00a7|(?<![A-Za-z0-9] )(?<![A-Za-z0-9])\u00a7\s*\d"
    r"|\.\./shared/|\bSTYLE\.md\b|\btikv-alert-rules\.yml\b",
    re.IGNORECASE,
)
# A relative link of a Markdown page: [text](path) or [text](path#anchor); web and mail links are not relative.
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)")
CITATION = re.compile(r"docs/reference/([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?")
# Relative links inside docs/reference/ pages: [text](page.md#anchor).
RELATIVE_LINK = re.compile(r"\]\(([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def tracked_files() -> list[Path]:
    """Return the files git tracks (or would: new, not ignored) in the scanned folders and at the top level."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT, capture_output=True, check=True, text=True
    ).stdout
    paths = sorted({p for p in out.split("\0") if p})
    chosen = [p for p in paths if "/" not in p or any(p == d or p.startswith(d + "/") for d in SCANNED)]
    return [REPO_ROOT / p for p in chosen if (REPO_ROOT / p).is_file()]


def text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None  # images and other binary files cite nothing


def github_slug(heading: str) -> str:
    """Return the anchor GitHub gives a Markdown heading (before de-duplication)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors_of(markdown: str) -> set[str]:
    """Return every heading anchor of a Markdown page, with GitHub's -1, -2 suffixes for repeats."""
    seen: Counter[str] = Counter()
    anchors: set[str] = set()
    in_fence = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        m = HEADING.match(line)
        if in_fence or not m:
            continue
        slug = github_slug(m.group(1))
        anchors.add(slug if seen[slug] == 0 else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return anchors


def leaks(text: str) -> list[str]:
    """Return each notebook mention and tracker-issue citation in a text."""
    return [m.group(0) for m in NOTEBOOK.finditer(text)] + [m.group(0) for m in TRACKER_ISSUE.finditer(text)]


def shorthand(text: str) -> list[str]:
    """Return each piece of the notebook's shorthand, or name of a file beside the repository, in a text."""
    return [m.group(0) for m in SHORTHAND.finditer(text)]


def broken_links(path: Path, text: str) -> list[str]:
    """Return each relative link of a Markdown page whose file, or heading in a Markdown file, does not exist."""
    broken = []
    for target, anchor in MARKDOWN_LINK.findall(text):
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("/"):
            continue  # https:, mailto:, or a site path: not a file of the repository
        resolved = (path.parent / target).resolve() if target else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors_of(resolved.read_text(encoding="utf-8")):
            broken.append(f"{target}#{anchor}: no such heading")
    return broken


def broken_citations(path: Path, text: str) -> list[str]:
    """Return each docs/reference citation in a file whose page or heading does not exist."""
    found = [(page, anchor) for page, anchor in CITATION.findall(text)]
    if path.parent == REFERENCE:
        found += RELATIVE_LINK.findall(text)
    broken = []
    for page, anchor in found:
        target = REFERENCE / page
        if not target.is_file():
            broken.append(f"docs/reference/{page}: no such page")
        elif anchor and anchor not in anchors_of(target.read_text(encoding="utf-8")):
            broken.append(f"docs/reference/{page}#{anchor}: no such heading")
    return broken


# --- the scanners find what they look for ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("I/O size cap", "io-size-cap"),
        ("Prices (us-east-1)", "prices-us-east-1"),
        ("gp3 limits raised in 2025", "gp3-limits-raised-in-2025"),
        ("`BurstBalance`", "burstbalance"),
        ("See [the table](x.md)", "see-the-table"),
        ("st1 and sc1 throughput credits", "st1-and-sc1-throughput-credits"),
    ],
)
def test_slugs_are_githubs(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_repeated_headings_get_numbered_anchors() -> None:
    page = "# Title\n## Notes\ntext\n```\n## not a heading\n```\n## Notes\n"
    assert anchors_of(page) == {"title", "notes", "notes-1"}


def test_the_scan_catches_each_kind_of_leak() -> None:
    # Built from pieces so that this file does not itself cite what it looks for.
    notebook, issue = "domain" + ".md", "issue"
    text = f"gp2 bucket (../shared/reference/{notebook} §1.3); fixed in ({issue} 12); {issue.title()} 16's budget; "
    text += f"{issue}s 5 and 12; {issue} #3"
    assert leaks(text) == [notebook, f"{issue} 12", f"{issue.title()} 16", f"{issue}s 5", f"{issue} #3"]
    assert leaks("see https://github.com/prometheus/cloudwatch_exporter/issues/482 and docs/reference/") == []


def test_the_scan_catches_the_notebooks_shorthand() -> None:
    # Built from pieces so that this file's examples are not themselves findings of the scan.
    aws, types, pc, section = "AWS" + "DOC", "EC2" + "TYPES", "PC" + "DOCS", "\u00a7"
    text = (
        f"gp2 ({aws} `general-purpose.md`); limits ({types} 2024); {pc} dynamic-config.md; PingCAP (seed 000); "
        f"Seed 002: Titan; PingCAP's seed-004 point; The seed article's case; notebook {section}1.3; "
        f"the cap (\"{section}3.1\"); see ../shared/{'STYLE'}.md and tikv-alert-rules.yml"
    )
    assert shorthand(text) == [
        aws, types, pc, "seed 000", "Seed 002", "seed-004", "seed article", f"notebook {section}", f"{section}3",
        "../shared/", "STYLE.md", "tikv-alert-rules.yml",
    ]
    # Not shorthand: a numbered section of a named public document, a random seed, a Jupyter notebook, the
    # repository's own copies of TiKV files.
    fine = (
        f"RFC 5321 {section}4.5.3.2; FPP3 {section}4.3; NIST SP 800-63B {section}5.1.1.2; seed 0 for every fit; "
        "the same input and seed; statsmodels' MSTL example notebook; data/tikv-config-template.toml"
    )
    assert shorthand(fine) == []


def test_a_broken_relative_link_is_caught(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("# Page\n## A heading\n", encoding="utf-8")
    (tmp_path / "data.json").write_text("{}", encoding="utf-8")
    text = (
        "[ok](page.md#a-heading) [ok](page.md) [ok](data.json) [ok](#local) [web](https://example.com/x.md#y) "
        "[gone](missing.md) [heading](page.md#no-heading) [here](#nowhere)\n# Local\n"
    )
    (tmp_path / "index.md").write_text(text, encoding="utf-8")
    assert broken_links(tmp_path / "index.md", text) == [
        "missing.md: no such file",
        "page.md#no-heading: no such heading",
        "#nowhere: no such heading",
    ]


def test_a_citation_of_a_missing_page_or_heading_is_caught() -> None:
    text = (
        "docs/reference/gp2-burst.md#the-credit-bucket docs/reference/gp2-burst.md#no-such-heading "
        "docs/reference/no-such-page.md"
    )
    assert broken_citations(REPO_ROOT / "x.py", text) == [
        "docs/reference/gp2-burst.md#no-such-heading: no such heading",
        "docs/reference/no-such-page.md: no such page",
    ]


# --- the repository -----------------------------------------------------------------------------------------


def test_the_scan_covers_the_tree() -> None:
    files = {p.relative_to(REPO_ROOT).as_posix() for p in tracked_files()}
    assert {"backend/headroom/domain/references.py", "docs/reference/README.md", "pyproject.toml"} <= files
    assert any(f.startswith("frontend/src/") for f in files) and not any(f.startswith("frontend/node_modules") for f in files)


def test_no_file_cites_the_private_notebook_or_a_tracker_issue() -> None:
    found = []
    for path in tracked_files():
        text = text_of(path)
        if text is None or not (NOTEBOOK.search(text) or TRACKER_ISSUE.search(text)):
            continue  # no match in the whole text: none in any of its lines (the lines only number the hits)
        for n, line in enumerate(text.splitlines(), 1):
            found += [f"{path.relative_to(REPO_ROOT)}:{n}: {hit}" for hit in leaks(line)]
    assert found == []


def test_no_file_uses_the_notebooks_shorthand() -> None:
    found = []
    for path in tracked_files():
        text = text_of(path)
        if text is None or path == Path(__file__).resolve():  # this file's pattern names what it looks for
            continue
        if not SHORTHAND.search(text):
            continue  # no match in the whole text: none in any of its lines
        for n, line in enumerate(text.splitlines(), 1):
            found += [f"{path.relative_to(REPO_ROOT)}:{n}: {hit}" for hit in shorthand(line)]
    assert found == []


def test_every_relative_link_of_a_markdown_page_resolves() -> None:
    broken = []
    pages = [p for p in tracked_files() if p.suffix == ".md"]
    for path in pages:
        text = text_of(path)
        if text is not None:
            broken += [f"{path.relative_to(REPO_ROOT)}: {b}" for b in broken_links(path, text)]
    assert broken == []
    assert len(pages) > 20 and any(p.parent == REFERENCE for p in pages)


def test_every_reference_page_is_indexed() -> None:
    index = (REFERENCE / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in REFERENCE.glob("*.md") if p.name != "README.md")
    assert pages, "docs/reference/ has no pages"
    assert [p for p in pages if f"]({p})" not in index] == []


def test_every_cited_reference_page_and_heading_exists() -> None:
    broken = []
    cited = 0
    for path in tracked_files():
        text = text_of(path)
        if text is None or path == Path(__file__).resolve():  # this file's examples are broken on purpose
            continue
        cited += len(CITATION.findall(text))
        broken += [f"{path.relative_to(REPO_ROOT)}: {b}" for b in broken_citations(path, text)]
    assert broken == []
    assert cited > 100  # the code does cite the reference (the scan is not looking at nothing)

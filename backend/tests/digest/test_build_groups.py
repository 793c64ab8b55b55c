"""The weekly email shows findings that share a cause as one entry: the primary fix's what-if and the related
findings under it (domain FindingGroup; docs/thresholds/finding-groups.md).

The case follows PingCAP's "Best Practices for TiDB on AWS Cloud" (docs/reference/pingcap-guidance.md#block-cache-on-ebs,
docs/reference/pingcap-guidance.md#volume-choice-on-aws): a 500 GiB gp2 volume
(baseline 3 x 500 = 1,500 IOPS, AWS gp2 docs) out of burst and "shrink the block cache" on the same node; moving
the volume to gp3 (3,000 IOPS, no bucket) resolves both: "resolves 2 of 2".
"""

from __future__ import annotations

import datetime as dt

from headroom.digest.build import ClusterDigest, DigestData, FindingItem, build_digest, collapse_groups

NOW = dt.datetime(2026, 11, 2, 8, 0, tzinfo=dt.UTC)
SUMMARY = "Primary fix: gp3 500 GiB, 3,000 IOPS, 250 MiB/s resolves 2 of 2"
BURST = FindingItem(title="vol-a (gp2 500 GiB): BurstBalance fell to 0%", severity="critical",
                    entity="volume vol-a", group_id="group-1", group_cause="disk I/O of node tikv-1",
                    group_summary=SUMMARY)
CACHE = FindingItem(title="tikv-1: shrink the block cache <b>", severity="warning", entity="tikv node tikv-1",
                    group_id="group-1", group_cause="disk I/O of node tikv-1", group_summary=SUMMARY)
ALONE = FindingItem(title="tikv-9: scheduler pool saturated", severity="warning", entity="tikv node tikv-9")


def _data(items: list[FindingItem]) -> DigestData:
    cluster = ClusterDigest(name="prod", url="https://h.example/c/1",
                            open_by_severity={"critical": 1, "warning": 2}, new_this_week=3, resolved_this_week=0,
                            open_findings=items)
    return DigestData(org_name="Acme", week_start=dt.date(2026, 11, 2), period_start=NOW - dt.timedelta(days=7),
                      period_end=NOW, dashboard_url="https://h.example/clusters", clusters=[cluster])


def test_collapse_keeps_one_entry_per_group_with_the_others_as_related() -> None:
    out = collapse_groups([BURST, ALONE, CACHE])
    assert [i.title for i in out] == [BURST.title, ALONE.title]
    assert list(out[0].related) == [CACHE.title]
    assert list(out[1].related) == []


def test_the_email_shows_the_group_once_with_its_what_if() -> None:
    digest = build_digest(_data([CACHE, ALONE, BURST]))
    text = digest.text
    # One entry for the two findings of the group (the critical one first), the lone finding after it.
    assert text.count(BURST.title) == 1 and text.count(CACHE.title) == 1
    assert text.index(BURST.title) < text.index(f"Related: {CACHE.title}") < text.index(ALONE.title)
    assert f"Same cause (disk I/O of node tikv-1): {SUMMARY}" in text
    assert "1. [CRITICAL] " + BURST.title in text and "2. [WARNING] " + ALONE.title in text
    assert "more open" not in text  # 3 open = 2 in the group + 1 alone: all shown
    html = digest.html
    assert f"<strong>{SUMMARY}</strong>" in html
    assert "Related: tikv-1: shrink the block cache &lt;b&gt;</li>" in html  # user text stays escaped
    assert "shrink the block cache <b>" not in html

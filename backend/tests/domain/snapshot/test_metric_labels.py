"""Every series a user can see has a name in words: the registry's metrics and the advisor's derived views."""

from __future__ import annotations

import re

from headroom.domain.snapshot.labels import METRIC_LABELS, metric_label, metric_unit
from headroom.domain.snapshot.registry import REGISTRY
from headroom.findings.evidence_series import DERIVED_UNITS

# A metric id: a dotted name with an underscore ("ebs.burst_balance"), or any registry id as it is.
METRIC_ID = re.compile(r"\b[a-z0-9]+\.[a-z0-9]+_[a-z0-9_.]+\b")


def test_every_registry_metric_and_derived_view_has_a_label() -> None:
    assert set(REGISTRY) | set(DERIVED_UNITS) == set(METRIC_LABELS)


def test_labels_are_words_not_ids() -> None:
    labels = [m.label for m in METRIC_LABELS.values()]
    assert len(set(labels)) == len(labels)  # two series never share a name
    for metric, label in ((m, spec.label) for m, spec in METRIC_LABELS.items()):
        assert metric not in label and not METRIC_ID.search(label), (metric, label)
        assert label[:1].isupper() or label.startswith("gRPC"), label


def test_the_named_examples() -> None:
    assert metric_label("ebs.burst_balance") == "Burst balance"
    assert metric_unit("ebs.burst_balance") == "%"
    assert metric_label("derived.counted_iops") == "IOPS counted in 256 KiB units"
    assert metric_unit("derived.counted_iops") == "IOPS"
    assert metric_label("tikv.wait.propose") == "Propose wait, p99"


def test_an_unknown_id_is_said_in_words() -> None:
    # a series a newer collector stores before it has a label still does not show its id
    assert metric_label("ebs.some_new_metric") == "Some new metric"
    assert metric_unit("ebs.some_new_metric") is None
    assert not METRIC_ID.search(metric_label("tikv.thread_cpu.some_pool"))


def test_derived_units_agree_with_the_labels() -> None:
    for metric, unit in DERIVED_UNITS.items():
        assert metric_unit(metric) == unit, metric

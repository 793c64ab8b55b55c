"""Pure: plan a CloudWatch sweep (series x window) into GetMetricData requests at the API's lower bound of calls.

GetMetricData limits (docs/reference/cloudwatch.md#getmetricdata, the GetMetricData API reference): a request names at most 500 metric
queries (`MAX_QUERIES`), and one call returns at most 100,800 datapoints (`MaxDatapoints`, default and maximum
`MAX_DATAPOINTS`); a request that has more datapoints is continued with `NextToken`, each page being one more
call. So a request of `r` queries of `p` points each costs `ceil(r * p / 100,800)` calls, and a sweep of `S`
queries totalling `T` points costs at least

    lower_bound = max(ceil(S / 500), ceil(T / 100,800)).

How the plan meets it (proved by the hypothesis tests in tests/sources/aws/test_metric_plan.py):

* all requests of one period share one window, so each series has the same `p` points;
* S <= 500: one request of `ceil(S p / D)` pages would meet the bound, so the DP below (which never needs
  more pages than that) does too, and splits it into one-page requests where that costs no extra call;
* p <= 201 (= floor(100,800 / 500)): ceil(S / 500) requests of one page each: the bound;
* otherwise rows are split into requests by an exact cover: a request of `c` pages holds at most
  `min(500, floor(c D / p))` queries; the fewest pages covering S rows is found by an unbounded-knapsack DP
  over page counts (`_min_pages`). Whenever some row count `g <= 500` has `g p` a multiple of D (true when
  `p` is a multiple of 210 minutes-points, e.g. the 14-day backfill's 20,160 one-minute points, because
  480 x 210 = 100,800), requests of `g` rows waste nothing and only the last request has a partial page,
  so the DP reaches the bound. Among plans with the fewest calls it prefers requests of fewer pages: a
  paginated call re-sends its queries, so metrics requested (the billed unit, docs/reference/cloudwatch.md#pricing) stay ~= S. `normalise_points` widens other windows to such a `p` (moving the start
  earlier only: a wider window re-reads points the idempotent store already has, it never skips one).
* Mixed periods (1-minute EBS, 5-minute EC2 basic monitoring): the 1-minute series are planned first; the
  5-minute ones first fill the query slots and datapoints left in pages already paid for, then the rest
  are planned the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MAX_QUERIES = 500  # docs/reference/cloudwatch.md#getmetricdata: "as many as 500 different metrics" per GetMetricData request
MAX_DATAPOINTS = 100_800  # docs/reference/cloudwatch.md#getmetricdata: "a total of as many as 100,800 data points" per call
# Rows of p points fit one page for every group of 500 when p <= this (100,800 / 500 = 201.6).
ONE_PAGE_POINTS = MAX_DATAPOINTS // MAX_QUERIES
# 480 x 210 = 100,800: windows whose point count is a multiple of 210 have zero-waste groups of 480.
EXACT_UNIT_POINTS = 210


@dataclass(frozen=True)
class PlannedRequest:
    """One GetMetricData request: which series (indexes into the sweep's list), its datapoints and calls."""

    series: tuple[int, ...]
    points: int  # worst case: every query returns a point for every period of the window
    pages: int


@dataclass(frozen=True)
class SweepPlan:
    requests: tuple[PlannedRequest, ...]
    lower_bound: int

    @property
    def calls(self) -> int:
        return sum(r.pages for r in self.requests)

    @property
    def metrics_requested(self) -> int:
        """Metrics billed: every query of every call (each page re-names the request's queries)."""
        return sum(r.pages * len(r.series) for r in self.requests)

    @property
    def datapoints(self) -> int:
        return sum(r.points for r in self.requests)


def pages_for(rows: int, points_per_series: int) -> int:
    """Calls one request of `rows` queries of `points_per_series` points costs (NextToken pages)."""
    return max(1, math.ceil(rows * points_per_series / MAX_DATAPOINTS)) if rows else 0


def lower_bound(points_per_series: Sequence[int]) -> int:
    """The fewest GetMetricData calls any plan can use for these series: max(ceil(S/500), ceil(T/100,800))."""
    if not points_per_series:
        return 0
    total = sum(points_per_series)
    return max(math.ceil(len(points_per_series) / MAX_QUERIES), math.ceil(total / MAX_DATAPOINTS))


def points_in(window_seconds: int, period_seconds: int) -> int:
    """Datapoints one series can return over a window at a period (a partial last period counts)."""
    return max(1, math.ceil(window_seconds / period_seconds))


def normalise_points(rows: int, points: int) -> int:
    """Widen a window's point count so a uniform plan of `rows` series meets the lower bound (see module doc)."""
    if rows <= MAX_QUERIES or points <= ONE_PAGE_POINTS:
        return points
    if _min_pages(rows, points)[0] == lower_bound([points] * rows):
        return points
    return math.ceil(points / EXACT_UNIT_POINTS) * EXACT_UNIT_POINTS


def _rows_for_pages(pages: int, points: int) -> int:
    return min(MAX_QUERIES, pages * MAX_DATAPOINTS // points)


def _min_pages(rows: int, points: int) -> tuple[int, list[int]]:
    """Fewest pages covering `rows` uniform rows, and the page count of each request (unbounded knapsack)."""
    if rows == 0:
        return 0, []
    if points <= ONE_PAGE_POINTS:
        n = math.ceil(rows / MAX_QUERIES)
        return n, [1] * n
    full = pages_for(MAX_QUERIES, points)  # more pages than this never buys more rows
    items = [(c, _rows_for_pages(c, points)) for c in range(1, full + 1)]
    items = [(c, r) for c, r in items if r > 0]
    best_ratio = max(r / c for c, r in items)
    # Bulk with the most efficient request, DP over the rest: the bulk never hurts once the remainder is
    # larger than every item (an exchange argument on unbounded knapsack), so keep `full` items of slack.
    # Among equally efficient requests the one with fewest pages re-sends its queries least (metrics billed).
    c_best, r_best = min(((c, r) for c, r in items if r / c == best_ratio), key=lambda it: it[0])
    slack_rows = (full + 1) * MAX_QUERIES
    bulk = max(0, (rows - slack_rows) // r_best)
    rest = rows - bulk * r_best
    # f[n] = most rows coverable with n pages; grow n until it covers `rest`.
    f = [0]
    choice = [0]
    n = 0
    while f[n] < rest:
        n += 1
        best, pick = 0, 0
        for c, r in items:
            if c <= n and f[n - c] + r > best:
                best, pick = f[n - c] + r, c
        f.append(best)
        choice.append(pick)
    parts: list[int] = []
    k = n
    while k > 0 and choice[k]:
        parts.append(choice[k])
        k -= choice[k]
    return bulk * c_best + n, [c_best] * bulk + parts


def _uniform_requests(indexes: Sequence[int], points: int) -> list[PlannedRequest]:
    if not indexes:
        return []
    _, page_counts = _min_pages(len(indexes), points)
    # Give each request its capacity, largest first; the last one takes what remains.
    page_counts.sort(reverse=True)
    out: list[PlannedRequest] = []
    pos = 0
    for pages in page_counts:
        if pos >= len(indexes):
            break
        take = min(_rows_for_pages(pages, points), len(indexes) - pos)
        chunk = tuple(indexes[pos : pos + take])
        pos += take
        out.append(PlannedRequest(chunk, len(chunk) * points, pages_for(len(chunk), points)))
    assert pos == len(indexes), "plan does not cover every series"
    return out


def plan_sweep(periods: Sequence[int], window_seconds: int) -> SweepPlan:
    """Plan GetMetricData requests for series with these periods over one window (indexes into `periods`)."""
    by_period: dict[int, list[int]] = {}
    for i, period in enumerate(periods):
        by_period.setdefault(period, []).append(i)
    requests: list[PlannedRequest] = []
    # Densest series first (1-minute before 5-minute); sparser ones first fill the room left in the pages
    # already paid for, then get requests of their own.
    for period in sorted(by_period):
        points = points_in(window_seconds, period)
        todo = by_period[period]
        filled: list[PlannedRequest] = []
        for req in requests:
            room = min(MAX_QUERIES - len(req.series), (req.pages * MAX_DATAPOINTS - req.points) // points)
            take, todo = todo[:room], todo[room:]
            filled.append(PlannedRequest(req.series + tuple(take), req.points + len(take) * points, req.pages)
                          if take else req)
        requests = filled + _uniform_requests(todo, points)
    bound = lower_bound([points_in(window_seconds, p) for p in periods])
    return SweepPlan(tuple(requests), bound)


def plan_calls(rows: int, points: int) -> int:
    """Calls a uniform sweep of `rows` series x `points` points costs with this planner."""
    return sum(r.pages for r in _uniform_requests(list(range(rows)), points)) if rows else 0


def plan_window(periods: Sequence[int], window_seconds: int, *, step_seconds: int = 300,
                max_widen_steps: int = 210) -> tuple[SweepPlan, int]:
    """Plan a sweep, widening the window (start earlier, in `step_seconds`) until calls equal the bound.

    Incremental windows (<= 201 points) and the 7- and 14-day backfills are exact as asked; other windows may
    need a few minutes more overlap. Returns the plan and the window length it was made for.
    """
    window = math.ceil(window_seconds / step_seconds) * step_seconds
    first = plan_sweep(periods, window)
    if first.calls == first.lower_bound:
        return first, window
    for k in range(1, max_widen_steps + 1):
        plan = plan_sweep(periods, window + k * step_seconds)
        if plan.calls == plan.lower_bound:
            return plan, window + k * step_seconds
    return first, window

"""The failed-call log line: one a period per upstream and kind, saying how many went unsaid,
and never what the upstream answered."""

from __future__ import annotations

import pytest

from router.fault_log import FaultLog


def test_one_line_a_period_per_upstream_and_kind_then_the_count_left_unsaid(caplog: pytest.LogCaptureFixture) -> None:
    faults = FaultLog(every_s=3600)
    with caplog.at_level("WARNING", logger="tandem.upstream"):
        for step in range(1, 6):
            faults.failed("edge", "disconnected", None, "tandem", "run-1", step, "mid-stream")
        faults.failed("edge", "timeout", None, "tandem", "run-1", 6, "mid-stream")
        faults.failed("cloud", "status", 503, "tandem", "run-2", 1, "before its answer")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert "kind=disconnected" in lines[0] and "step=1" in lines[0] and "trajectory=run-1" in lines[0]
    assert "kind=timeout" in lines[1] and "status=503" in lines[2]
    faults = FaultLog(every_s=0)  # every line said: none is left over
    with caplog.at_level("WARNING", logger="tandem.upstream"):
        caplog.clear()
        faults.failed("edge", "disconnected", None, "tandem", "run-1", 1, "mid-stream")
        faults.failed("edge", "disconnected", None, "tandem", "run-1", 2, "mid-stream")
    assert len(caplog.records) == 2 and "more" not in caplog.records[1].getMessage()


def test_the_count_left_unsaid_comes_with_the_next_line(caplog: pytest.LogCaptureFixture) -> None:
    faults = FaultLog(every_s=3600)
    with caplog.at_level("WARNING", logger="tandem.upstream"):
        faults.failed("edge", "timeout", None, "tandem", "run-1", 1, "mid-stream")
        faults.failed("edge", "timeout", None, "tandem", "run-1", 2, "mid-stream")
        faults.failed("edge", "timeout", None, "tandem", "run-1", 3, "mid-stream")
        faults._every_s = 0  # the period is over
        faults.failed("edge", "timeout", None, "tandem", "run-1", 4, "mid-stream")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and "(and 2 more of this kind since the last line)" in lines[1], lines

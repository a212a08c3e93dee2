from __future__ import annotations

import pytest

from memoryd.daemon.wake import SetBackDetector, WakeDetector


class FakeClock:
    """A machine's two clocks: both advance while awake, only the wall clock while asleep."""

    def __init__(self) -> None:
        self.mono = 1000.0
        self.wall = 1_790_000_000.0

    def run(self, seconds: float) -> tuple[float, float]:
        self.mono += seconds
        self.wall += seconds
        return self.mono, self.wall

    def sleep(self, seconds: float) -> tuple[float, float]:
        self.wall += seconds
        return self.mono, self.wall


def test_first_reading_only_sets_the_baseline() -> None:
    clock = FakeClock()
    clock.sleep(10_000)
    assert WakeDetector(threshold_s=60).check(clock.mono, clock.wall) is False


def test_running_machine_never_reports_a_wake() -> None:
    clock, wake = FakeClock(), WakeDetector(threshold_s=60)
    readings = [clock.run(step) for step in (0, 1, 5, 300, 3600, 0.01)]
    assert [wake.check(*r) for r in readings] == [False] * 6
    assert wake.wakes == 0


def test_sleep_longer_than_threshold_is_reported_once() -> None:
    clock, wake = FakeClock(), WakeDetector(threshold_s=60)
    assert not wake.check(*clock.run(1))
    clock.run(30)
    assert wake.check(*clock.sleep(7200)) is True
    assert wake.last_gap_s == pytest.approx(7200)
    assert wake.check(*clock.run(1)) is False  # the new gap is the new baseline
    assert wake.wakes == 1


def test_short_sleep_and_small_drift_are_ignored() -> None:
    clock, wake = FakeClock(), WakeDetector(threshold_s=60)
    wake.check(*clock.run(0))
    assert not wake.check(*clock.sleep(59))
    assert not wake.check(*clock.sleep(59))  # drift is measured per reading, not summed
    assert wake.check(*clock.sleep(61))


def test_wall_clock_set_backwards_is_not_a_wake() -> None:
    clock, wake = FakeClock(), WakeDetector(threshold_s=60)
    wake.check(*clock.run(0))
    assert not wake.check(*clock.sleep(-3600))
    assert wake.check(*clock.sleep(120))  # measured from the moved baseline


def test_reset_forgets_the_baseline() -> None:
    clock, wake = FakeClock(), WakeDetector(threshold_s=60)
    wake.check(*clock.run(0))
    clock.sleep(600)
    wake.reset()
    assert not wake.check(clock.mono, clock.wall)


def test_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="threshold_s must be positive, got 0"):
        WakeDetector(threshold_s=0)


def test_a_clock_set_back_is_reported_once_and_a_sleep_never() -> None:
    clock, back = FakeClock(), SetBackDetector(threshold_s=60)
    assert back.check(*clock.run(1)) is False  # the baseline
    assert back.check(*clock.sleep(8 * 3600)) is False  # a resume is WakeDetector's
    assert back.check(*clock.run(1)) is False
    clock.wall -= 3600  # NTP corrects a clock that ran an hour ahead
    assert back.check(*clock.run(1)) is True
    assert back.last_s == 3600
    assert back.check(*clock.run(1)) is False  # once
    clock.wall -= 30  # a small correction is no news
    assert back.check(*clock.run(1)) is False

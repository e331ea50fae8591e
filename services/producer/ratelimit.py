"""Token bucket: at most ``rate`` sends per second on average, bursts up to ``burst``."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """Blocking token bucket; clock and sleep are injectable for tests."""

    def __init__(
        self,
        rate: float,
        burst: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.capacity = burst if burst is not None else max(1.0, rate / 10)
        self.tokens = self.capacity
        self.clock = clock
        self.sleep = sleep
        self.last = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now

    def acquire(self, n: float = 1.0) -> float:
        """Take ``n`` tokens, sleeping until they are paid for; returns seconds slept.

        The bucket may go into debt and the caller sleeps the debt off: one computed
        sleep instead of a polling loop, which float rounding could keep spinning.
        """
        self._refill()
        self.tokens -= n
        if self.tokens >= 0:
            return 0.0
        wait = -self.tokens / self.rate
        self.sleep(wait)
        return wait

"""Ctrl-C (SIGINT) and SIGTERM during training: one clean stop, whenever they come. No torch.

Until a run has a checkpoint, a signal stops it at once: nothing is lost (a fresh directory
holds nothing yet, a resumed one is untouched). From then on a signal is noted, not raised:
the steps vote on it, so every rank stops at the same step and saves it, and no save is ever
cut half-way. A signal a process was started with ignored (`cmd &` ignores SIGINT) stays so.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from ..errors import SigtermInterrupt

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def raise_at_once(signum: int, frame: FrameType | None) -> None:
    """A handler that raises SIGTERM as Ctrl-C is (a KeyboardInterrupt), SIGINT as Python does."""
    raise SigtermInterrupt if signum == signal.SIGTERM else KeyboardInterrupt


def raise_sigterm_at_once() -> None:
    """From now on SIGTERM raises SigtermInterrupt, unless this process ignores it."""
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, raise_at_once)


class StopSignals:
    """The handler of both signals: raises at once until `hold()`, then notes them."""

    def __init__(self) -> None:
        self.noted: list[int] = []
        self.holding = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        # noted even when raised: code that catches everything (safetensors reading a file,
        # for one) may turn the KeyboardInterrupt into its own error, or swallow it
        self.noted.append(signum)
        if not self.holding:
            raise_at_once(signum, frame)

    def hold(self) -> None:
        """Note signals from now on: the run has a checkpoint to stop at."""
        self.holding = True

    def votes(self) -> tuple[bool, bool]:
        """(SIGINT noted, SIGTERM noted): what this process asks the ranks to stop for."""
        return signal.SIGINT in self.noted, signal.SIGTERM in self.noted


@contextmanager
def stop_signals() -> Iterator[StopSignals]:
    """SIGINT and SIGTERM for the block go to a StopSignals; the previous handlers after it."""
    handler = StopSignals()
    if threading.current_thread() is not threading.main_thread():  # signals go to main only
        yield handler
        return
    previous = {
        s: signal.signal(s, handler) for s in SIGNALS if signal.getsignal(s) is not signal.SIG_IGN
    }
    try:
        yield handler
    finally:
        for signum, before in previous.items():  # None: one set outside Python, the default
            if signal.getsignal(signum) is handler:  # one set in the block (deaf at a stop) stays
                signal.signal(signum, signal.SIG_DFL if before is None else before)

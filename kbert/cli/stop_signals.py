"""SIGTERM and SIGINT as an exception, so that a stopped command removes what it left unfinished.

By default SIGTERM ends Python at once: no `finally`, no `with` exit, so a `kbert finetune`
stopped by `kill` or a job scheduler left its hidden partial run directory behind. Inside
`signals_raise()`, SIGTERM and SIGINT (Ctrl-C) raise `Stopped` in the main thread instead; it
unwinds through every `with StagedRunDirectory`, `new_directory` and `atomic_path`, which delete
their partial output, and the command exits with 128 + the signal's number, as a shell reports a
process the signal killed. A second signal during that cleanup ends the process at once (the
default action), as a user pressing Ctrl-C twice expects; `kbert finetune` removes what that
leaves the next time it writes to the same directory.
"""

import contextlib
import signal
import threading

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stopped(BaseException):  # noqa: N818 (not an error: the user asked the command to stop)
    """Raised in the main thread when a stop signal arrives inside `signals_raise()`.

    A `BaseException`, like `KeyboardInterrupt`, so that `except Exception` in library code does
    not swallow it.

    Args:
        signum: int. The signal's number.
    """

    def __init__(self, signum):
        self.signum = int(signum)
        self.name = signal.Signals(self.signum).name
        super().__init__(f"stopped by {self.name}")

    @property
    def exit_status(self):
        """128 + the signal's number: what a shell reports for a process the signal ended."""
        return 128 + self.signum


@contextlib.contextmanager
def signals_raise(signals=STOP_SIGNALS):
    """Inside the block, each of `signals` raises `Stopped` once; then its default action.

    Outside the main thread (where Python cannot install handlers) the block runs unchanged.
    The previous handlers come back when the block ends.

    Args:
        signals: sequence of `signal.Signals`, default SIGTERM and SIGINT.

    Example:
    >>> import os
    >>> with signals_raise():  # doctest: +SKIP
    ...     os.kill(os.getpid(), signal.SIGTERM)
    Traceback (most recent call last):
    Stopped: stopped by SIGTERM
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        for number in signals:  # a second signal is not caught: it ends the process now
            signal.signal(number, signal.SIG_DFL)
        raise Stopped(signum)

    previous = {number: signal.signal(number, stop) for number in signals}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)

"""SIGTERM and SIGINT raise `Stopped` once inside `signals_raise()`; handlers come back after."""

import os
import signal

import pytest

from kbert.cli.intermixed_parser import IntermixedArgumentParser
from kbert.cli.stop_signals import Stopped, signals_raise


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_unwinds_the_block_and_handlers_come_back(tmp_path, number):
    before = {n: signal.getsignal(n) for n in (signal.SIGTERM, signal.SIGINT)}
    cleaned = []
    with pytest.raises(Stopped) as stopped:
        with signals_raise():
            try:
                os.kill(os.getpid(), number)
                for _ in range(10**6):  # the handler runs between bytecodes
                    pass
            finally:
                cleaned.append(True)
                # A second signal now would end the process: the default action.
                assert signal.getsignal(number) == signal.SIG_DFL
    assert cleaned == [True]
    assert stopped.value.signum == number and stopped.value.exit_status == 128 + number
    assert str(stopped.value) == f"stopped by {signal.Signals(number).name}"
    assert {n: signal.getsignal(n) for n in before} == before


def test_stopped_is_not_an_exception_that_library_code_would_swallow():
    assert not issubclass(Stopped, Exception) and issubclass(Stopped, BaseException)


def test_the_intermixed_parser_still_refuses_unknown_and_missing_arguments(capsys):
    parser = IntermixedArgumentParser(prog="predict")
    parser.add_argument("run_dir")
    parser.add_argument("texts", nargs="*")
    parser.add_argument("--pair", action="append")
    args = parser.parse_args(["--pair", "p", "r", "a", "--pair", "q", "b"])
    assert (args.run_dir, args.texts, args.pair) == ("r", ["a", "b"], ["p", "q"])
    with pytest.raises(SystemExit):
        parser.parse_args(["r", "a", "--typo", "x"])
    assert "unrecognized arguments: --typo" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["--pair", "p"])
    assert "the following arguments are required: run_dir" in capsys.readouterr().err

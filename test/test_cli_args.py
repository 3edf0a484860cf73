"""`brainmem` refuses arguments no message can carry, or that mean nothing, before any ROS work.

Each of these raised a traceback deep in rclpy (an int32 or uint64 field overflowed), was
taken silently for something else (a negative or NaN time for "now"), or waited on a
nonsensical timeout. argparse now refuses them: one line naming the argument, exit 2.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from brainmem_ros.cli import main, namespace, parse_time


@pytest.mark.parametrize(('argv', 'reason'), [
    (['state', 'mug', '--as-of', '1e30'], 'outside what a ROS time holds'),  # SystemError in rclpy
    (['state', 'mug', '--as-of', 'nan'], 'outside what a ROS time holds'),  # was "now"
    (['state', 'mug', '--as-of', '-5'], 'outside what a ROS time holds'),  # was "now"
    (['state', 'mug', '--as-of', '9999-12-31'], 'outside what a ROS time holds'),  # wrapped negative
    (['state', 'mug', '--as-of', 'yesterday'], 'not POSIX seconds nor an ISO 8601 time'),
    (['reinforce', '18446744073709551616', '--reward', '1'], 'a memory id must be within'),
    (['reinforce', '-1', '--reward', '1'], 'a memory id must be within'),
    (['reinforce', '1', '--reward', 'nan'], 'must be a finite number'),
    (['forget', '18446744073709551616', '--mode', 'protect'], 'a memory id must be within'),
    (['retrieve', 'cup', '-k', '99999999999'], 'top_k must be within'),  # wrapped to 1215752191
    (['--timeout', '-1', 'stats'], 'must be positive'),  # "did not answer within -1.0 s"
    (['--timeout', '0', 'stats'], 'must be positive'),
    (['--timeout', 'inf', 'stats'], 'must be a finite number'),  # hung
    (['--ns', 'bad ns', 'stats'], 'not a ROS namespace'),  # InvalidServiceNameException
    (['replay', 'bag', '--rate', '0'], 'must be positive'),
    (['replay', 'bag', '--topics'], 'expected at least one argument'),  # replayed nothing, exit 0
    (['store', 'caf\udce9'], "argument b'caf\\xe9' is not valid UTF-8"),  # UnicodeEncodeError
])
def test_bad_arguments_are_refused_in_one_line(argv: list[str], reason: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert reason in err and 'Traceback' not in err, err
    assert err.splitlines()[-1].startswith('brainmem'), err


def test_good_arguments_are_taken_as_meant() -> None:
    assert parse_time('1000') == 1000.0
    assert parse_time('2026-12-01T09:30') == datetime(2026, 12, 1, 9, 30).timestamp()
    assert namespace('robot1') == namespace('/robot1/') == '/robot1'
    assert namespace('') == namespace('/') == ''

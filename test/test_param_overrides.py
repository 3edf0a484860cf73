"""``-p`` overrides next to a params file: a wrongly typed one is refused, as without the file."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import rclpy
from conftest import REPO
from rclpy.context import Context
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.parameter import Parameter
from rosutil import dds_participants, node_process

from brainmem_ros.ros.param_overrides import command_line_overrides, rcl_value

pytestmark = pytest.mark.ros

PARAMS_FILE = REPO / 'config' / 'brainmem.yaml'  # the README's command line uses it


@pytest.mark.parametrize('overrides', [
    ['memory.retrieval.hops:=abc', 'memory.retrieval.default_top_k:=notanint'],
    ['memory.retrieval.hops:=1.0'],
    ['memory.retrieval.w_act:=high'],
    ['autostart:=maybe'],
])
def test_wrongly_typed_override_next_to_params_file(tmp_path: Path, overrides: list[str]) -> None:
    # The file sets each of these with its declared type; rclpy alone let the file's value win.
    args = ['--ros-args', '--params-file', str(PARAMS_FILE), '-p', f'data_dir:={tmp_path / "m"}']
    for rule in overrides:
        args += ['-p', rule]
    log = tmp_path / 'node.log'
    with node_process(args, log=log) as proc:
        try:
            code: int | None = proc.wait(60)
        except subprocess.TimeoutExpired:  # it started, the override ignored (node_process stops it)
            code = None
    text = log.read_text()
    name = overrides[0].partition(':=')[0]
    assert code == 2 and 'Traceback' not in text, text
    assert 'invalid parameter' in text and name in text, text
    assert not (tmp_path / 'm').exists()


def _node_argv(monkeypatch: pytest.MonkeyPatch, *rules: str) -> Context:
    """A context initialised from this command line, as ``brainmem_node`` is (sys.argv)."""
    argv = ['brainmem_node', '--ros-args', '--params-file', str(PARAMS_FILE)]
    for rule in rules:
        argv += ['-p', rule]
    monkeypatch.setattr(sys, 'argv', argv)
    context = Context()
    rclpy.init(context=context)
    return context


def test_valid_overrides_next_to_params_file_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brainmem_ros.ros.node import BrainMemNode

    context = _node_argv(monkeypatch, f'data_dir:={tmp_path}', 'memory.retrieval.hops:=3',
                         'memory.retrieval.w_act:=0.5', 'autostart:=false', 'text_topics:=[a, b]',
                         'memory.retrieval.hops:=0x4')  # the last one of a name counts, as in rcl
    try:
        node = BrainMemNode(context=context)
        try:
            values = {name: node.get_parameter(name).value for name in
                      ('data_dir', 'memory.retrieval.hops', 'memory.retrieval.w_act', 'autostart',
                       'text_topics', 'memory.retrieval.default_top_k')}
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    assert values == {'data_dir': str(tmp_path), 'memory.retrieval.hops': 4, 'memory.retrieval.w_act': 0.5,
                      'autostart': False, 'text_topics': ['a', 'b'], 'memory.retrieval.default_top_k': 10}


def test_wrongly_typed_override_next_to_params_file_in_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from brainmem_ros.ros.node import BrainMemNode

    context = _node_argv(monkeypatch, f'data_dir:={tmp_path}', 'memory.dynamics.reward_rate:=fast')
    before = dds_participants()
    try:
        with pytest.raises(InvalidParameterTypeException, match=r"'memory.dynamics.reward_rate' to "
                           r"'fast' of type 'STRING', expecting type 'DOUBLE'"):
            BrainMemNode(context=context)
        assert dds_participants() == before  # the node begun is destroyed, its participant too
    finally:
        rclpy.try_shutdown(context=context)


def test_command_line_overrides() -> None:
    argv = ['node', 'user', '-p', 'x:=1', '--ros-args', '-r', '__ns:=/r', '-p', 'a:=1', '--param', 'b:=x',
            '--params-file', 'f.yaml', '-p', 'a:=2', '--', '-p', 'c:=3', '--ros-args', '-p', 'd:=[1, 2]']
    assert command_line_overrides(argv) == {'a': '2', 'b': 'x', 'd': '[1, 2]'}


RCL_TEXTS = [
    '2', '-3', '+4', '0x1A', '010', '08', '0', '1.0', '1e3', '.5', '5.', '-.5e+2', '0x1p3', 'abc', '1_000',
    'true', 'True', 'yes', 'y', 'N', 'off', 'oN', 'inf', '-Infinity', 'nan', '.inf', '-.Inf', '.NaN',
    '1e999', '1e-400', '9223372036854775807', '9223372036854775808', "'3'", '"true"', '~', '12abc',
    '[1, 2]', '[a, b]', '[true, false]', '[1.0, 2.5]',
]


@pytest.fixture(scope='module')
def rcl_read() -> dict[str, Parameter]:
    """What rcl made of each text, all read by one node: one DDS participant, not forty (one
    of forty made and destroyed in a row hung in Fast DDS's teardown in a full run)."""
    args = ['x', '--ros-args']
    for i, text in enumerate(RCL_TEXTS):
        args += ['-p', f'v{i}:={text}']
    context = Context()
    rclpy.init(args=args, context=context)
    try:
        node = rclpy.create_node('reader', context=context,
                                 automatically_declare_parameters_from_overrides=True)
        read = {text: node.get_parameter(f'v{i}') for i, text in enumerate(RCL_TEXTS)}
        node.destroy_node()  # type: ignore[no-untyped-call]
    finally:
        rclpy.try_shutdown(context=context)
    return read


@pytest.mark.parametrize('text', RCL_TEXTS)
def test_rcl_value_reads_as_rcl_does(text: str, rcl_read: dict[str, Parameter]) -> None:
    rcl = rcl_read[text]
    ours = rcl_value(text)
    assert Parameter('v', value=ours).type_ == rcl.type_, (ours, rcl.value)  # type: ignore[no-untyped-call]
    assert ours == rcl.value or (isinstance(ours, float) and math.isnan(ours) and math.isnan(rcl.value))


def test_override_a_node_section_beats_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # rcl resolves a node's sections in the order they first appeared: the -p before the file
    # opened /**, so the file's section for this node wins over the later -p, silently.
    from brainmem_ros.ros.node import BrainMemNode
    from brainmem_ros.ros.param_overrides import check_overrides

    own = tmp_path / 'robot.yaml'
    own.write_text('/brainmem:\n  ros__parameters:\n    max_markers: 7\n')
    argv = ['brainmem_node', '--ros-args', '-p', f'data_dir:={tmp_path}', '--params-file', str(own),
            '-p', 'max_markers:=9', '-p', 'autostart:=false']
    monkeypatch.setattr(sys, 'argv', argv)
    context = Context()
    rclpy.init(context=context)
    try:
        node = BrainMemNode(context=context)
        try:
            held = node.get_parameter('max_markers').value
            warnings = check_overrides(node, argv)
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    assert held == 7
    assert len(warnings) == 1
    assert warnings[0].startswith('-p max_markers:=9 did not take effect (max_markers is 7)')

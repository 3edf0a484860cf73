"""The launch file, checked without `launch` installed: it must name only real things."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from brainmem_ros.ros.params import parameter_names

REPO = Path(__file__).resolve().parent.parent
LAUNCH = REPO / 'launch' / 'brainmem.launch.py'


def _tree() -> ast.Module:
    return ast.parse(LAUNCH.read_text(), filename=str(LAUNCH))


def _calls(name: str) -> list[ast.Call]:
    return [n for n in ast.walk(_tree()) if isinstance(n, ast.Call)
            and getattr(n.func, 'id', getattr(n.func, 'attr', None)) == name]


def _kw(call: ast.Call, key: str) -> ast.expr:
    return next(k.value for k in call.keywords if k.arg == key)


def test_every_argument_is_described() -> None:
    declared = _calls('DeclareLaunchArgument')
    names = {ast.literal_eval(c.args[0]) for c in declared}
    assert names == {'namespace', 'params_file', 'data_dir', 'log_level', 'use_sim_time', 'autostart',
                     'use_respawn'}
    for c in declared:
        assert len(ast.literal_eval(_kw(c, 'description'))) > 10
    used = {ast.literal_eval(c.args[0]) for c in _calls('LaunchConfiguration')}
    assert used == names


def test_executable_and_files_exist() -> None:
    (node,) = _calls('Node')
    assert ast.literal_eval(_kw(node, 'package')) == 'brainmem_ros'
    executable = ast.literal_eval(_kw(node, 'executable'))
    cmake = (REPO / 'CMakeLists.txt').read_text()
    assert f'scripts/{executable}' in cmake and (REPO / 'scripts' / executable).stat().st_mode & 0o111
    assert re.search(r'install\(DIRECTORY launch config', cmake)
    joined = [ast.literal_eval(a) for c in _calls('join') for a in c.args[1:]]
    assert joined[:2] == ['config', 'brainmem.yaml'] and (REPO / 'config' / 'brainmem.yaml').is_file()


def test_parameters_named_exist() -> None:
    declared = set(parameter_names()) | {'use_sim_time'}
    (node,) = _calls('Node')
    inline = [d for d in ast.walk(_kw(node, 'parameters')) if isinstance(d, ast.Dict)]
    keys = {ast.literal_eval(k) for d in inline for k in d.keys if k is not None}
    assert keys and keys <= declared

    params = yaml.safe_load((REPO / 'config' / 'brainmem.yaml').read_text())['/**']['ros__parameters']

    def flatten(prefix: str, value: object) -> list[str]:
        if isinstance(value, dict):
            return [n for k, v in value.items() for n in flatten(f'{prefix}{k}.', v)]
        return [prefix[:-1]]

    in_yaml = set(flatten('', params))
    assert in_yaml == set(parameter_names()), in_yaml ^ set(parameter_names())

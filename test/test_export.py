"""`brainmem export` (JSONL + GraphML) and `brainmem viz` (PNG) on a real memory directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import networkx as nx
import pytest

from brainmem_ros.cli import main


def test_export_and_picture(mem_factory: Any, tmp_path: Path) -> None:
    mem = mem_factory()
    a = mem.store('I opened the fridge to get the milk', episode_id='e')
    b = mem.store('The milk carton in the fridge is almost empty', episode_id='e')
    mem.reinforce([a.id, b.id], reward=1.0)
    mem.close()
    out = tmp_path / 'export'
    assert main(['export', str(tmp_path / 'mem'), str(out)]) == 0
    units = [json.loads(line) for line in (out / 'units.jsonl').read_text().splitlines()]
    assert [u['text'] for u in units] == [a.text, b.text]
    edges = [json.loads(line) for line in (out / 'edges.jsonl').read_text().splitlines()]
    assert {'temporal', 'entity', 'co_use'} <= {e['kind'] for e in edges}
    graph = nx.read_graphml(out / 'graph.graphml')
    assert graph.number_of_nodes() == 2 and graph.number_of_edges() == len(edges)
    png = tmp_path / 'graph.png'
    assert main(['viz', str(tmp_path / 'mem'), str(png)]) == 0
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 10_000


def test_a_directory_without_memory_is_refused_and_left_alone(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # Opening the store created an empty one there: 0 units exported, exit 0.
    missing, out = tmp_path / 'nonexist', tmp_path / 'out'
    assert main(['export', str(missing), str(out)]) == 1
    assert f'brainmem: error: no memory at {missing}' in capsys.readouterr().err
    assert main(['viz', str(missing), str(tmp_path / 'v.png')]) == 1
    assert f'no memory at {missing}' in capsys.readouterr().err
    assert not missing.exists() and not out.exists() and not (tmp_path / 'v.png').exists()


def test_graphml_holds_text_with_control_characters(mem_factory: Any, tmp_path: Path) -> None:
    mem = mem_factory()
    unit = mem.store('hi\x01\x02\x1b[31m red\ttab')
    mem.close()
    out = tmp_path / 'export'
    assert main(['export', str(tmp_path / 'mem'), str(out)]) == 0
    ElementTree.parse(out / 'graph.graphml')  # raised "not well-formed (invalid token)"
    graph = nx.read_graphml(out / 'graph.graphml')
    assert graph.nodes[str(unit.id)]['text'] == 'hi\ufffd\ufffd\ufffd[31m red\ttab'
    assert json.loads((out / 'units.jsonl').read_text())['text'] == 'hi\x01\x02\x1b[31m red\ttab'


def test_unwritable_outputs_are_one_line_errors(mem_factory: Any, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    mem_factory().store('The red cup is on the kitchen table')
    data = tmp_path / 'mem'
    a_file = tmp_path / 'a_file'
    a_file.write_text('keep me')
    a_dir = tmp_path / 'a_dir.png'
    a_dir.mkdir()
    cases = [(['export', str(data), str(a_file)], 'exists and is not a directory'),  # FileExistsError
             (['viz', str(data), str(tmp_path / 'no_dir' / 'v.png')], 'no directory'),  # FileNotFoundError
             (['viz', str(data), str(tmp_path / 'v.txt')], '.txt is not a picture format'),  # ValueError
             (['viz', str(data), str(a_dir)], 'Is a directory')]  # any other OSError
    for argv, reason in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.startswith('brainmem: error: ') and reason in err and len(err.splitlines()) == 1, err
    assert a_file.read_text() == 'keep me' and not (tmp_path / 'v.txt').exists()
    assert main(['viz', str(data), str(tmp_path / 'graph')]) == 0  # savefig adds .png: so does the report
    assert capsys.readouterr().out == f'wrote {tmp_path / "graph.png"}\n'
    assert (tmp_path / 'graph.png').stat().st_size > 0

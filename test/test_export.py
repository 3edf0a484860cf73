"""`brainmem export` (JSONL + GraphML) and `brainmem viz` (PNG) on a real memory directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx

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

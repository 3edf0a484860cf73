"""Export a memory directory (units, edges) to JSONL and GraphML, and draw it as a PNG."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from brainmem_ros.memory.brainmem import DB_NAME
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import EdgeKind, MemoryUnit


def _units(store: SqliteStore) -> list[MemoryUnit]:
    ids = store.all_ids()
    units = store.get_units(ids)
    return [units[i] for i in ids]


def _open(data_dir: Path) -> SqliteStore:
    return SqliteStore(Path(data_dir) / DB_NAME)


def export(data_dir: Path, out_dir: Path) -> tuple[Path, Path, Path]:
    """Write ``units.jsonl``, ``edges.jsonl`` and ``graph.graphml`` under ``out_dir``."""
    import networkx as nx

    out_dir.mkdir(parents=True, exist_ok=True)
    store = _open(data_dir)
    try:
        units = _units(store)
        edges = list(store.all_edges())
    finally:
        store.close()
    units_path, edges_path, graph_path = (out_dir / 'units.jsonl', out_dir / 'edges.jsonl',
                                          out_dir / 'graph.graphml')
    with units_path.open('w') as fh:
        for unit in units:
            fh.write(json.dumps(dataclasses.asdict(unit), default=str) + '\n')
    with edges_path.open('w') as fh:
        for edge in edges:
            fh.write(json.dumps({'src': edge.src, 'dst': edge.dst, 'kind': edge.kind.value,
                                 'weight': edge.weight}) + '\n')
    graph = nx.MultiDiGraph()
    for unit in units:
        graph.add_node(unit.id, text=unit.text, type=unit.type.value, strength=unit.strength,
                       valence=unit.valence, importance=unit.importance,
                       marginalized=unit.marginalized, protected=unit.protected)
    for edge in edges:
        graph.add_edge(edge.src, edge.dst, kind=edge.kind.value, weight=edge.weight)
    nx.write_graphml(graph, graph_path)
    return units_path, edges_path, graph_path


_EDGE_COLOURS = {EdgeKind.TEMPORAL: '#999999', EdgeKind.ENTITY: '#1f77b4', EdgeKind.SIMILAR: '#9467bd',
                 EdgeKind.CO_USE: '#2ca02c', EdgeKind.SUPERSEDES: '#d62728', EdgeKind.EVIDENCE: '#ff7f0e'}


def draw(data_dir: Path, out: Path, *, max_units: int = 120) -> Path:
    """A picture of the memory graph: node colour = valence, size = strength, edge colour = kind."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import networkx as nx

    store = _open(data_dir)
    try:
        units = _units(store)[-max_units:]
        keep = {u.id for u in units}
        edges = [e for e in store.all_edges() if e.src in keep and e.dst in keep]
    finally:
        store.close()
    graph = nx.Graph()
    graph.add_nodes_from(u.id for u in units)
    for e in edges:
        graph.add_edge(e.src, e.dst, kind=e.kind, weight=e.weight)
    pos = nx.spring_layout(graph, seed=7, weight='weight')
    fig, ax = plt.subplots(figsize=(12, 9), dpi=100)
    for kind, colour in _EDGE_COLOURS.items():
        sel = [(a, b) for a, b, d in graph.edges(data=True) if d['kind'] is kind]
        if sel:
            nx.draw_networkx_edges(graph, pos, edgelist=sel, edge_color=colour, alpha=0.6, ax=ax,
                                   width=[1 + 2 * graph.edges[a, b]['weight'] for a, b in sel],
                                   label=kind.value)
    by_id = {u.id: u for u in units}
    nx.draw_networkx_nodes(
        graph, pos, ax=ax, node_size=[120 + 250 * by_id[n].strength for n in graph.nodes],
        node_color=[by_id[n].valence for n in graph.nodes], cmap='RdYlGn', vmin=-1, vmax=1,
        edgecolors=['black' if by_id[n].protected else 'white' for n in graph.nodes])
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=7,
                            labels={n: f'{n}: {by_id[n].text[:28]}' for n in graph.nodes})
    ax.set_title(f'brainmem graph: {len(units)} memories, {len(edges)} links '
                 '(node colour = valence, size = strength)')
    ax.legend(loc='lower left', fontsize=8)
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out

"""Export a memory directory (units, edges) to JSONL and GraphML, and draw it as a PNG."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from brainmem_ros.errors import InvalidInputError, StoreError
from brainmem_ros.memory.brainmem import DB_NAME
from brainmem_ros.memory.store import SqliteStore
from brainmem_ros.memory.types import EdgeKind, MemoryUnit


def _units(store: SqliteStore) -> list[MemoryUnit]:
    ids = store.all_ids()
    units = store.get_units(ids)
    return [units[i] for i in ids]


def _open(data_dir: Path) -> SqliteStore:
    # Opening a store creates one where there is none: a mistyped directory would
    # be exported as an empty memory (and left behind, empty).
    path = Path(data_dir) / DB_NAME
    if not path.is_file():
        msg = f'no memory at {data_dir} (no {DB_NAME} there)'
        raise StoreError(msg)
    return SqliteStore(path)


# XML 1.0 has no way to write these, not even as character references: a GraphML file
# holding one is refused by every XML parser. They are replaced by U+FFFD; units.jsonl
# keeps the exact text.
_NOT_XML_10 = re.compile('[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')


def _xml_text(text: str) -> str:
    return _NOT_XML_10.sub('\ufffd', text)


def export(data_dir: Path, out_dir: Path) -> tuple[Path, Path, Path]:
    """Write ``units.jsonl``, ``edges.jsonl`` and ``graph.graphml`` under ``out_dir``.

    StoreError when ``data_dir`` holds no memory; nothing is written then.
    """
    import networkx as nx

    if out_dir.exists() and not out_dir.is_dir():
        msg = f'cannot export to {out_dir}: it exists and is not a directory'
        raise InvalidInputError(msg)
    store = _open(data_dir)
    try:
        units = _units(store)
        edges = list(store.all_edges())
    finally:
        store.close()
    out_dir.mkdir(parents=True, exist_ok=True)
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
        graph.add_node(unit.id, text=_xml_text(unit.text), type=unit.type.value, strength=unit.strength,
                       valence=unit.valence, importance=unit.importance,
                       marginalized=unit.marginalized, protected=unit.protected)
    for edge in edges:
        graph.add_edge(edge.src, edge.dst, kind=edge.kind.value, weight=edge.weight)
    nx.write_graphml(graph, graph_path)
    return units_path, edges_path, graph_path


_EDGE_COLOURS = {EdgeKind.TEMPORAL: '#999999', EdgeKind.ENTITY: '#1f77b4', EdgeKind.SIMILAR: '#9467bd',
                 EdgeKind.CO_USE: '#2ca02c', EdgeKind.SUPERSEDES: '#d62728', EdgeKind.EVIDENCE: '#ff7f0e'}


def draw(data_dir: Path, out: Path, *, max_units: int = 120) -> Path:
    """A picture of the memory graph: node colour = valence, size = strength, edge colour = kind.

    The format is that of ``out``'s suffix (``.png`` added when it has none); returns the
    path written. InvalidInputError for a format matplotlib cannot write or a directory
    that does not exist, before any work.
    """
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.backend_bases import FigureCanvasBase

    out = out if out.suffix else out.with_suffix('.png')  # what savefig writes, then
    formats = FigureCanvasBase.get_supported_filetypes()
    if out.suffix[1:].lower() not in formats:
        msg = (f'cannot draw to {out}: {out.suffix} is not a picture format '
               f'(one of: {", ".join(sorted(formats))})')
        raise InvalidInputError(msg)
    if not out.parent.is_dir():
        msg = f'cannot draw to {out}: no directory {out.parent}'
        raise InvalidInputError(msg)
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
    if edges:  # a legend of no edge kinds is only a warning on the terminal
        ax.legend(loc='lower left', fontsize=8)
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out

"""package.xml declares what the code imports, with keys rosdep can resolve."""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# Import name -> rosdep key of what provides it.
KEYS = {
    'ament_index_python': 'ament_index_python', 'builtin_interfaces': 'builtin_interfaces',
    'geometry_msgs': 'geometry_msgs', 'launch': 'launch', 'launch_ros': 'launch_ros',
    'lifecycle_msgs': 'lifecycle_msgs', 'rcl_interfaces': 'rcl_interfaces', 'rclpy': 'rclpy',
    'std_msgs': 'std_msgs', 'visualization_msgs': 'visualization_msgs', 'rosgraph_msgs': 'rosgraph_msgs',
    'numpy': 'python3-numpy', 'yaml': 'python3-yaml', 'networkx': 'python3-networkx',
    'matplotlib': 'python3-matplotlib', 'zstandard': 'python3-zstandard', 'lz4': 'python3-lz4',
    'psycopg': 'python3-psycopg', 'psycopg_pool': 'python3-psycopg-pool',
    'threadpoolctl': 'python3-threadpoolctl',
    'onnxruntime': 'python3-onnxruntime-pip', 'faiss': 'python3-faiss-cpu-pip',
    'tokenizers': 'python3-tokenizers-pip', 'spacy': 'python3-spacy-pip', 'rosbags': 'python3-rosbags-pip',
    'mcap': 'python3-mcap-pip', 'llama_cpp': 'python3-llama-cpp-python-pip',
}
# Keys of rosdep's own database (ros/rosdistro) that are not ROS packages.
UPSTREAM = {'python3-numpy', 'python3-yaml', 'python3-networkx', 'python3-matplotlib',
            'python3-onnxruntime-pip', 'python3-pytest', 'python3-hypothesis'}


def _declared() -> set[str]:
    root = ET.parse(ROOT / 'package.xml').getroot()
    return {e.text.strip() for e in root if e.tag.endswith('depend') and e.text}


def _imported() -> set[str]:
    names: set[str] = set()
    for path in [*(ROOT / 'brainmem_ros').rglob('*.py'), *(ROOT / 'launch').glob('*.py')]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split('.')[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split('.')[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != 'brainmem_ros'}


def test_every_import_is_declared() -> None:
    imported = _imported()
    assert imported - set(KEYS) == set(), 'imports without a rosdep key in KEYS'
    assert {KEYS[n] for n in imported} - _declared() == set()


def test_every_key_resolves() -> None:
    ours = set(yaml.safe_load((ROOT / 'rosdep.yaml').read_text()))
    python_keys = {k for k in _declared() if k.startswith('python3-')}
    assert python_keys - ours - UPSTREAM == set()

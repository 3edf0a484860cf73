"""Session set-up shared by all suites: DDS isolation and the real on-device models."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Each test session talks DDS on its own domain, on this host only, so parallel
# runs and other ROS graphs on the machine never see each other.
os.environ['ROS_DOMAIN_ID'] = str(1 + os.getpid() % 200)
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / 'shared' / 'data' / 'rosbag2_fixtures'


@pytest.fixture(scope='session')
def model_paths() -> object:
    """The default models, materialised into the model cache (as `make setup` does)."""
    from brainmem_ros.encoders.models import materialise_models

    return materialise_models(include_llm=False)


@pytest.fixture(scope='session')
def embedder(model_paths: object) -> object:
    """The real ONNX sentence encoder, loaded once per session."""
    from brainmem_ros.encoders.onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(model_paths.embedder_model, model_paths.tokenizer)  # type: ignore[attr-defined]


@pytest.fixture
def mem_factory(tmp_path: Path, embedder: object) -> Iterator[object]:
    """Open BrainMem stores on the real encoder; all are closed at teardown."""
    from brainmem_ros.memory import BrainMem

    opened: list[BrainMem] = []

    def factory(path: Path | None = None, **kwargs: object) -> BrainMem:
        mem = BrainMem.open(path or tmp_path / 'mem', embedder=embedder, **kwargs)  # type: ignore[arg-type]
        opened.append(mem)
        return mem

    yield factory
    for mem in opened:
        mem.close()

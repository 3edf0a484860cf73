"""Session set-up shared by all suites: DDS isolation and the real on-device models."""

from __future__ import annotations

import os
import sys
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


_STATUS: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave without the C++ exit handlers once the session has reported.

    Fast DDS destroys the participants still alive at exit in a static destructor, one after
    another, and that can deadlock between a writer's timer and a remote participant's
    liveliness check (eProsima/Fast-DDS#6193): a fresh-clone run hung there after printing its
    summary, at 40% CPU. The tests' outcome is decided by then; the status is pytest's own.
    """
    del config
    if _STATUS and 'rclpy' in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_STATUS[-1])

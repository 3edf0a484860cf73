"""Reading real rosbag2 bags (sqlite3, split sqlite3, mcap) and the household demo bag."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from brainmem_ros.bags import BagError, BagMessage, TopicInfo, deserialize, list_topics, read_bag
from brainmem_ros.bags.episode import (
    CAPTION_TOPIC,
    EPISODE_ID,
    OBSERVATION_TOPIC,
    POSE_LEAD_NS,
    POSE_TOPIC,
    household_episode,
    main,
    read_episode,
    room_at,
    write_episode_bag,
)
from brainmem_ros.bags.typestore import MSG_NAMES, load_typestore

REPO = Path(__file__).resolve().parents[1]
# Recorded by the ROS 2 project (ros2/rosbag2 test resources); kept next to the repository.
FIXTURES = REPO.parent / 'shared' / 'data' / 'rosbag2_fixtures'
HOUSEHOLD = REPO / 'data' / 'household_episode'

WBAG_COUNTS = {
    'AAA': 804, 'BBB': 742, 'CCC': 742, 'DDD': 753,
    'EEE': 804, 'FFF': 772, 'GGG': 731, 'HHH': 726,
}
TALKER_TOPICS = [
    TopicInfo('/parameter_events', 'rcl_interfaces/msg/ParameterEvent', 0),
    TopicInfo('/rosout', 'rcl_interfaces/msg/Log', 10),
    TopicInfo('/topic', 'std_msgs/msg/String', 10),
]


@pytest.fixture(scope='session')
def bags(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writable copy of the upstream fixtures: the originals are read-only and shared."""
    if not FIXTURES.is_dir():
        pytest.fail(f'rosbag2 fixtures missing: expected them at {FIXTURES}')
    copy = tmp_path_factory.mktemp('fixtures') / 'rosbag2_fixtures'
    shutil.copytree(FIXTURES, copy, copy_function=shutil.copyfile)
    for directory in (copy, *(p for p in copy.rglob('*') if p.is_dir())):
        directory.chmod(0o755)
    return copy


def _strings(messages: list[BagMessage]) -> list[str]:
    return [_decoded(m).data for m in messages]


def _decoded(message: BagMessage) -> Any:
    return deserialize(message)


def _snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns,
                                   hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(root.rglob('*')) if p.is_file()
    }


# -- real bags recorded by ROS 2 ------------------------------------------------------------


@pytest.mark.parametrize('name', ['talker_sqlite3', 'talker_mcap'])
def test_talker_bag_reads_all_messages_in_order(bags: Path, name: str) -> None:
    messages = list(read_bag(bags / name))

    stamps = [m.timestamp_ns for m in messages]
    assert stamps == sorted(stamps)
    strings = [m for m in messages if m.topic == '/topic']
    assert {m.msgtype for m in strings} == {'std_msgs/msg/String'}
    assert _strings(strings) == [f'Hello, world! {n}' for n in range(10)]
    logs = [_decoded(m) for m in messages if m.topic == '/rosout']
    assert [log.msg for log in logs] == [f"Publishing: 'Hello, world! {n}'" for n in range(10)]
    assert len(messages) == 20
    assert list_topics(bags / name) == TALKER_TOPICS


def test_talker_storages_and_single_files_agree(bags: Path) -> None:
    from_db3 = list(read_bag(bags / 'talker_sqlite3'))

    assert list(read_bag(bags / 'talker_mcap')) == from_db3
    assert list(read_bag(bags / 'talker_sqlite3' / 'talker.db3')) == from_db3
    assert list(read_bag(bags / 'talker_mcap' / 'talker.mcap')) == from_db3


def test_split_sqlite3_bag_reads_every_file_in_timestamp_order(bags: Path) -> None:
    messages = list(read_bag(bags / 'wbag_sqlite3'))

    assert len(messages) == 6074
    stamps = [m.timestamp_ns for m in messages]
    assert stamps == sorted(stamps)
    assert (stamps[0], stamps[-1]) == (1000, 2998)
    # Topic ids differ between the five files: wrong mapping would shift these counts.
    assert Counter(m.topic for m in messages) == WBAG_COUNTS
    # Each payload is 'Hello, world! <timestamp - 1000> - <k>', so data and time match up.
    for message, text in zip(messages, _strings(messages), strict=True):
        match = re.fullmatch(r'Hello, world! (\d+) - \d+', text)
        assert match, text
        assert int(match[1]) == message.timestamp_ns - 1000
    assert list_topics(bags / 'wbag_sqlite3') == [
        TopicInfo(name, 'std_msgs/msg/String', count) for name, count in WBAG_COUNTS.items()
    ]


def test_topic_filter(bags: Path) -> None:
    wbag = bags / 'wbag_sqlite3'
    picked = list(read_bag(wbag, topics=['AAA', 'HHH']))
    assert Counter(m.topic for m in picked) == {'AAA': 804, 'HHH': 726}
    assert picked == [m for m in read_bag(wbag) if m.topic in {'AAA', 'HHH'}]

    for talker in ('talker_sqlite3', 'talker_mcap'):
        only = list(read_bag(bags / talker, topics='/topic'))
        assert _strings(only) == [f'Hello, world! {n}' for n in range(10)]
        assert list(read_bag(bags / talker, topics=[])) == []
        assert list(read_bag(bags / talker, topics=['/no_such_topic'])) == []


def test_directory_without_metadata_is_read_from_its_files(bags: Path, tmp_path: Path) -> None:
    bare = tmp_path / 'bare'
    shutil.copytree(bags / 'wbag_sqlite3', bare, copy_function=shutil.copyfile)
    (bare / 'metadata.yaml').unlink()

    assert list(read_bag(bare)) == list(read_bag(bags / 'wbag_sqlite3'))


def test_reading_writes_nothing_next_to_the_bag(bags: Path) -> None:
    before = _snapshot(bags)
    for name in ('talker_sqlite3', 'talker_mcap', 'wbag_sqlite3'):
        list_topics(bags / name)
        for _ in read_bag(bags / name):
            pass
        # Abandoning an iterator half way must not leave anything behind either.
        next(read_bag(bags / name))
    assert _snapshot(bags) == before


# -- the household demo episode ---------------------------------------------------------------


def test_household_episode_is_plausible() -> None:
    episode = household_episode()
    steps = episode.steps

    assert 20 <= len(steps) <= 30
    gaps = [(b.stamp_ns - a.stamp_ns) / 1e9 for a, b in itertools.pairwise(steps)]
    assert all(5.0 <= gap <= 20.0 for gap in gaps)
    assert all(room_at(s.x, s.y) == s.room for s in steps)
    assert {s.room for s in steps} == {'kitchen', 'living_room'}
    assert {s.type for s in steps} == {'observation', 'action', 'outcome'}
    texts = {s.text for s in steps}
    assert 'The knife was too dull to cut the bread.' in texts
    assert 'I stood on the chair to reach the book on the high shelf.' in texts
    assert 'The red cup is on the kitchen table.' in texts
    assert all(-180.0 < s.yaw_deg <= 180.0 for s in steps)
    assert household_episode() == episode


def test_committed_household_bag_matches_a_fresh_one(tmp_path: Path) -> None:
    fresh = write_episode_bag(tmp_path / 'fresh')

    assert list(read_bag(fresh)) == list(read_bag(HOUSEHOLD))
    assert read_episode(HOUSEHOLD) == household_episode()


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_household_bag_round_trips(tmp_path: Path, storage: str) -> None:
    path = write_episode_bag(tmp_path / 'bag', storage=storage)

    assert read_episode(path) == household_episode()
    assert list_topics(path) == [
        TopicInfo(POSE_TOPIC, 'geometry_msgs/msg/PoseWithCovarianceStamped', 28),
        TopicInfo(OBSERVATION_TOPIC, 'brainmem_ros/msg/Observation', 28),
        TopicInfo(CAPTION_TOPIC, 'std_msgs/msg/String', 5),
    ]
    messages = list(read_bag(path))
    for pose, observation in itertools.pairwise(messages):
        if observation.topic != OBSERVATION_TOPIC:
            continue
        assert pose.topic == POSE_TOPIC
        assert pose.timestamp_ns == observation.timestamp_ns - POSE_LEAD_NS
        decoded = _decoded(observation)
        assert decoded.header.frame_id == 'map'
        assert (decoded.source, decoded.episode_id, decoded.has_pose) == ('demo', EPISODE_ID, False)
        assert _decoded(pose).header.frame_id == 'map'


def test_household_bag_types_hash_like_rosidl() -> None:
    share = Path(sys.prefix) / 'share' / 'brainmem_ros' / 'msg'
    if not (share / 'Observation.json').is_file():
        pytest.skip('brainmem_ros interfaces are not installed in this prefix')
    store = load_typestore()
    for name in MSG_NAMES:
        generated = json.loads((share / f'{name}.json').read_text())['type_hashes'][0]
        assert store.hash_rihs01(f'brainmem_ros/msg/{name}') == generated['hash_string']


@pytest.mark.filterwarnings('ignore::DeprecationWarning')  # lark, imported by rclpy
def test_household_bag_deserializes_with_rclpy() -> None:
    serialization = pytest.importorskip('rclpy.serialization')
    messages_module = pytest.importorskip('brainmem_ros.msg')
    geometry = pytest.importorskip('geometry_msgs.msg')
    std = pytest.importorskip('std_msgs.msg')
    classes = {
        'brainmem_ros/msg/Observation': messages_module.Observation,
        'geometry_msgs/msg/PoseWithCovarianceStamped': geometry.PoseWithCovarianceStamped,
        'std_msgs/msg/String': std.String,
    }
    for message in read_bag(HOUSEHOLD):
        ours = _decoded(message)
        theirs = serialization.deserialize_message(message.rawdata, classes[message.msgtype])
        if message.topic == OBSERVATION_TOPIC:
            assert (theirs.text, theirs.type, theirs.header.stamp.sec) == (
                ours.text, ours.type, ours.header.stamp.sec)
        elif message.topic == POSE_TOPIC:
            assert theirs.pose.pose.position.x == ours.pose.pose.position.x
            assert list(theirs.pose.covariance) == list(ours.pose.covariance)
        else:
            assert theirs.data == ours.data


def test_episode_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / 'cli_bag'

    assert main([str(out), '--storage', 'mcap']) == 0
    assert (out / 'cli_bag.mcap').is_file()
    assert read_episode(out) == household_episode()
    assert main([str(out)]) == 1
    assert 'exists' in capsys.readouterr().err


# -- errors -----------------------------------------------------------------------------------


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(BagError, match='no bag at'):
        read_bag(tmp_path / 'nothing')
    with pytest.raises(BagError, match='no bag at'):
        list_topics(tmp_path / 'nothing')


@pytest.mark.parametrize(('name', 'error'), [
    ('garbage.db3', 'not a SQLite database'),
    ('garbage.mcap', 'not an MCAP file'),
    ('garbage.bin', 'unknown bag storage'),
])
def test_garbage_file(tmp_path: Path, name: str, error: str) -> None:
    path = tmp_path / name
    path.write_bytes(random.Random(7).randbytes(4096))

    with pytest.raises(BagError, match=error):
        read_bag(path)


def test_empty_or_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / 'notes.txt').write_text('not a bag')
    with pytest.raises(BagError, match='not a rosbag2 bag'):
        read_bag(tmp_path)


def test_bad_metadata(bags: Path, tmp_path: Path) -> None:
    bag = tmp_path / 'bag'
    shutil.copytree(bags / 'wbag_sqlite3', bag, copy_function=shutil.copyfile)
    meta = bag / 'metadata.yaml'
    text = meta.read_text()

    meta.write_text(text.replace('storage_identifier: sqlite3', 'storage_identifier: bolt'))
    with pytest.raises(BagError, match="unknown storage 'bolt'"):
        read_bag(bag)
    meta.write_text(text.replace('compression_mode: ""', 'compression_mode: FILE'))
    with pytest.raises(BagError, match='is compressed'):
        read_bag(bag)
    meta.write_text(text)
    (bag / 'wbag_3.db3').unlink()
    with pytest.raises(BagError, match=r'wbag_3\.db3, which is missing'):
        read_bag(bag)
    meta.write_text('rosbag2_bagfile_information: [unclosed')
    with pytest.raises(BagError, match='not valid YAML'):
        read_bag(bag)


@pytest.mark.parametrize('name', ['talker_sqlite3/talker.db3', 'talker_mcap/talker.mcap'])
def test_damaged_files_raise_bag_error_only(bags: Path, tmp_path: Path, name: str) -> None:
    data = (bags / name).read_bytes()
    rng = random.Random(name)
    for i in range(60):
        damaged = bytearray(data[:rng.randrange(16, len(data))] if i % 2 else data)
        for _ in range(0 if i % 2 else 20):
            damaged[rng.randrange(16, len(damaged))] = rng.randrange(256)
        path = tmp_path / f'{i}{Path(name).suffix}'
        path.write_bytes(bytes(damaged))
        try:
            list_topics(path)
            for message in read_bag(path):
                deserialize(message)
        except BagError:
            pass  # the one acceptable failure: anything else escaping fails the test


def test_truncated_files(bags: Path, tmp_path: Path) -> None:
    for name, error in (('talker.db3', 'not a readable rosbag2 database'),
                        ('talker.mcap', 'damaged or truncated')):
        source = next(bags.rglob(name))
        path = tmp_path / name
        path.write_bytes(source.read_bytes()[:4096])
        with pytest.raises(BagError, match=error):
            list(read_bag(path))


def test_uncheckpointed_wal_is_refused(bags: Path, tmp_path: Path) -> None:
    path = tmp_path / 'talker.db3'
    shutil.copyfile(bags / 'talker_sqlite3' / 'talker.db3', path)
    (tmp_path / 'talker.db3-wal').write_bytes(b'\0' * 32)

    with pytest.raises(BagError, match=r'non-empty talker\.db3-wal'):
        list(read_bag(path))


def test_bad_payload_and_unknown_type() -> None:
    with pytest.raises(BagError, match='damaged std_msgs/msg/String'):
        deserialize(BagMessage('/t', 'std_msgs/msg/String', 1, b'\0\1\0\0\xff\xff\xff\x7f'))
    with pytest.raises(BagError, match='unknown message type acme/msg/Rocket'):
        deserialize(BagMessage('/t', 'acme/msg/Rocket', 1, b'\0\1\0\0'))


def test_episode_writer_errors(tmp_path: Path) -> None:
    with pytest.raises(BagError, match='exists already'):
        write_episode_bag(tmp_path)
    with pytest.raises(BagError, match="unknown storage 'zip'"):
        write_episode_bag(tmp_path / 'x', storage='zip')


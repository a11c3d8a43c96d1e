"""The graph interface: parents, kinds, batch sizes, with_parents, and walk / find / replace."""

import numpy as np
import pytest

import parafeed as pf
from parafeed.core import graph
from parafeed.errors import InvalidArgumentError

pytestmark = pytest.mark.timeout(60)


def test_every_step_declares_its_kind():
    source = pf.Dataset.range(10)
    steps = {
        graph.SOURCE: [source, pf.Dataset.from_tensors(1), pf.Dataset.from_tensor_slices([1, 2])],
        graph.ONE_TO_ONE: [source.map(lambda x: x), source.prefetch(2), source.with_options(pf.Options())],
        graph.REORDERING: [source.shuffle(3), source.map(lambda x: x, 2, deterministic=False), source.cache()],
        graph.BATCHING: [source.batch(4), source.padded_batch(4), source.batch(2).equal_steps(steps=3)],
        graph.MANY_TO_MANY: [
            source.filter(lambda x: x > 1), source.take(3), source.repeat(2), source.skip(1), source.shard(2, 0),
            source.window(2), source.batch(2).unbatch(), pf.Dataset.zip((source, source)),
        ],
    }  # fmt: skip
    for kind, nodes in steps.items():
        for node in nodes:
            assert node.kind == kind, (type(node).__name__, node.kind)
            assert kind in graph.KINDS
    assert source.batch(4).batch_size == 4 and source.padded_batch(3).batch_size == 3
    assert source.batch(4).equal_steps(steps=3).batch_size == 4
    assert source.map(lambda x: x).batch_size is None


def test_parents_and_file_readers(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with pf.io.TFRecordWriter(path) as w:
        w.write(b"x")
    reader = pf.TFRecordDataset(path)
    assert reader.kind == graph.SOURCE
    (names,) = reader.parents  # a reader's parent is the dataset of file names it reads
    assert [bytes(n) for n in names] == [path.encode()]
    assert reader.file_list() == [path] and reader.record_counts() == [1] and reader.indexed
    zipped = pf.Dataset.zip((pf.Dataset.range(3), reader))
    assert len(zipped.parents) == 2 and zipped.parents[1] is reader


def test_walk_find_and_sources():
    a = pf.Dataset.range(5)
    b = a.map(lambda x: x * 2)
    c = pf.Dataset.zip((a, b)).shuffle(4, seed=1).batch(2)
    nodes = list(graph.walk(c))
    assert nodes[0] is c and len(nodes) == len({id(n) for n in nodes}) == 5  # a is shared, visited once
    assert graph.find(c, lambda n: n.kind == graph.SOURCE) == [a]
    assert [type(n).__name__ for n in graph.find(c, type(b))] == ["MapDataset"]
    assert graph.sources(c) == [a]
    assert graph.batching_step(c.prefetch(1).map(lambda x: x)) is c  # through one-to-one steps
    assert graph.batching_step(c.filter(lambda x: True)) is None


def test_replace_rebuilds_the_path_and_leaves_the_original():
    a = pf.Dataset.range(6)
    top = a.map(lambda x: x + 1).shuffle(6, seed=2).batch(3)
    new = graph.replace(top, a, pf.Dataset.range(100, 106))
    assert new is not top
    assert sorted(int(x) for b in new for x in b) == list(range(101, 107))
    assert sorted(int(x) for b in top for x in b) == list(range(1, 7))  # unchanged
    assert graph.replace(top, pf.Dataset.range(3), a) is top  # nothing to replace: the same node


def test_with_parents_keeps_arguments_and_checks_the_count():
    shuffled = pf.Dataset.range(10).shuffle(10, seed=4)
    other = shuffled.with_parents(pf.Dataset.range(10))
    assert other.seed == shuffled.seed and other.buffer_size == 10 and other is not shuffled
    assert [int(x) for x in other] == [int(x) for x in shuffled.with_parents(pf.Dataset.range(10))]
    zipped = pf.Dataset.zip({"a": pf.Dataset.range(3), "b": pf.Dataset.range(3)})
    swapped = zipped.with_parents(pf.Dataset.range(10, 13), pf.Dataset.range(20, 23))
    assert [(int(e["a"]), int(e["b"])) for e in swapped] == [(10, 20), (11, 21), (12, 22)]
    with pytest.raises(InvalidArgumentError, match="reads from 1 dataset"):
        shuffled.with_parents(pf.Dataset.range(2), pf.Dataset.range(2))


def test_counts_through_the_graph(tmp_path):
    paths = []
    for k, n in enumerate([3, 5]):
        paths.append(str(tmp_path / f"{k}.tfrecord"))
        with pf.io.TFRecordWriter(paths[-1]) as w:
            for i in range(n):
                w.write(bytes([i]))
    shuffled = pf.TFRecordDataset(paths).shuffle(4).map(len)
    assert shuffled.cardinality() == pf.UNKNOWN  # as tf.data
    assert graph.count(shuffled) == 8  # the records, counted by their index
    assert graph.count(shuffled.filter(lambda x: True)) == pf.UNKNOWN
    assert graph.count(pf.Dataset.from_tensor_slices(np.zeros(7))) == 7

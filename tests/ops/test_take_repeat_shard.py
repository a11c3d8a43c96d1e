import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError


def ints(ds):
    return [int(x) for x in ds]


def test_repeat_counts_and_cardinality():
    assert ints(pf.Dataset.range(2).repeat(3)) == [0, 1] * 3
    assert ints(pf.Dataset.range(2).repeat(0)) == []
    assert int(pf.Dataset.range(2).repeat().cardinality()) == pf.INFINITE
    assert int(pf.Dataset.range(0).repeat().cardinality()) == 0
    assert ints(pf.Dataset.range(0).repeat()) == []  # an empty input never spins
    with pytest.raises(TypeError, match="infinite"):
        len(pf.Dataset.range(2).repeat())


def test_take_and_skip():
    assert ints(pf.Dataset.range(5).take(2)) == [0, 1]
    assert ints(pf.Dataset.range(5).take(-1)) == [0, 1, 2, 3, 4]
    assert ints(pf.Dataset.range(5).skip(3)) == [3, 4]
    assert ints(pf.Dataset.range(5).skip(-1)) == []
    assert int(pf.Dataset.range(5).repeat().take(7).cardinality()) == 7
    with pytest.raises(InvalidArgumentError, match="-1"):
        pf.Dataset.range(5).take(-2)


def test_take_stops_pulling_from_its_input():
    pulled = []
    ds = pf.Dataset.range(100).map(lambda x: pulled.append(int(x)) or x).take(3)
    assert ints(ds) == [0, 1, 2]
    assert pulled == [0, 1, 2]


def test_shard_partitions_exactly():
    shards = [ints(pf.Dataset.range(10).shard(3, i)) for i in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]
    assert [len(pf.Dataset.range(10).shard(3, i)) for i in range(3)] == [4, 3, 3]


@pytest.mark.parametrize("num_shards, index", [(3, 3), (3, -1), (0, 0)])
def test_shard_arguments(num_shards, index):
    with pytest.raises(InvalidArgumentError, match="shard"):
        pf.Dataset.range(10).shard(num_shards, index)


def test_enumerate_and_zip_stop_at_the_shortest():
    assert [(int(i), int(x)) for i, x in pf.Dataset.range(3).enumerate(10)] == [(10, 0), (11, 1), (12, 2)]
    assert len(list(pf.Dataset.zip((pf.Dataset.range(3), pf.Dataset.range(10).repeat())))) == 3


def test_assert_cardinality_reports_and_checks_the_count():
    from parafeed.checkpoint import check_restores
    from parafeed.errors import FailedPreconditionError

    ds = pf.Dataset.range(10).filter(lambda x: True).apply(pf.experimental.assert_cardinality(10))
    assert ds.cardinality() == 10 and [int(x) for x in ds] == list(range(10))
    assert check_restores(ds) > 0
    short = pf.Dataset.range(1).apply(pf.experimental.assert_cardinality(pf.experimental.INFINITE_CARDINALITY))
    with pytest.raises(FailedPreconditionError, match="an infinite number of elements but contained only 1 element"):
        list(short)
    long = iter(pf.Dataset.range(10).apply(pf.experimental.assert_cardinality(5)))
    assert [int(next(long)) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="expected to contain 5 elements but contained at least 6 elements"):
        next(long)
    with pytest.raises(ValueError, match="expected_cardinality"):
        pf.Dataset.range(3).apply(pf.experimental.assert_cardinality(-3))


def test_at_finds_an_element_or_refuses_the_index():
    from parafeed.errors import FailedPreconditionError, OutOfRangeError

    ds = pf.Dataset.range(10).map(lambda x: x * 3)
    assert int(pf.experimental.at(ds, 4)) == 12
    assert int(pf.experimental.at(ds.filter(lambda x: x % 2 == 0), 2)) == 12  # no random access in tf.data
    for index in (-1, 10):
        with pytest.raises(OutOfRangeError, match=r"Index out of range \[0, 10\)"):
            pf.experimental.at(ds, index)
    with pytest.raises(IndexError, match="ended before index 9"):
        pf.experimental.at(ds.filter(lambda x: x < 6), 9)
    with pytest.raises(FailedPreconditionError, match="infinite"):
        pf.experimental.at(ds.repeat(), 0)

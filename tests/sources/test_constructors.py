import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.values import structure


def test_from_tensor_slices_yields_read_only_views():
    source = np.arange(6).reshape(3, 2)
    rows = list(pf.Dataset.from_tensor_slices(source))
    with pytest.raises(ValueError, match="read-only"):
        rows[0][0] = 99
    assert source.flags.writeable  # the caller's array is untouched


def test_from_tensor_slices_errors():
    with pytest.raises(InvalidArgumentError, match="component element is a scalar"):
        pf.Dataset.from_tensor_slices(3)
    with pytest.raises(InvalidArgumentError, match=r"same size in the first dimension.*\[0\]: 2, \[1\]: 3"):
        pf.Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))


def test_from_tensor_slices_of_empty_arrays_has_a_spec():
    ds = pf.Dataset.from_tensor_slices(np.zeros((0, 3), np.float32))
    assert list(ds) == []
    assert ds.element_spec == pf.TensorSpec((3,), "float32")
    assert ds.map(lambda x: x * 2).element_spec == pf.TensorSpec((3,), "float32")


def test_range_arguments():
    assert [int(x) for x in pf.Dataset.range(3)] == [0, 1, 2]
    assert [int(x) for x in pf.Dataset.range(5, 1, -2)] == [5, 3]
    assert len(pf.Dataset.range(0, 10_000, 7)) == len(range(0, 10_000, 7))
    assert list(pf.Dataset.range(10_001))[-1] == 10_000
    assert next(iter(pf.Dataset.range(2, output_type="float32"))).dtype == np.float32
    with pytest.raises(InvalidArgumentError, match="step"):
        pf.Dataset.range(1, 5, 0)
    with pytest.raises(InvalidArgumentError, match="1 to 3"):
        pf.Dataset.range()
    with pytest.raises(TypeError, match="must be integers"):
        pf.Dataset.range(2.5)


def test_generator_is_called_once_per_iterator():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)

    ds = pf.Dataset.from_generator(gen, output_signature=pf.TensorSpec((), "int64"))
    assert [int(x) for x in ds.repeat(2)] == [0, 1, 2, 0, 1, 2]
    assert len(calls) == 2
    assert int(ds.cardinality()) == pf.UNKNOWN


def test_generator_legacy_output_types_and_shapes():
    ds = pf.Dataset.from_generator(
        lambda: iter([([1, 2], b"a")]), output_types=("int64", "string"), output_shapes=([2], [])
    )
    assert ds.element_spec == (pf.TensorSpec((2,), "int64"), pf.TensorSpec((), "string"))
    ((x, s),) = list(ds)
    assert x.dtype == np.int64 and s == b"a"


@pytest.mark.parametrize(
    "values, signature, message",
    [
        (["a"], pf.TensorSpec((), "int64"), "could not be converted to the expected type"),
        ([[1, 2, 3]], pf.TensorSpec((2,), "int64"), r"of shape \(3,\) where an element of shape \(2,\)"),
        ([1], (pf.TensorSpec((), "int64"),) * 2, "did not match the expected structure"),
        ([[1, 2]], (pf.TensorSpec((), "int64"),) * 2, "did not match the expected structure"),
        ([{"a": 1, "b": 2}], {"a": pf.TensorSpec((), "int64")}, "did not match the expected structure"),
        ([1], pf.TensorSpec((), "string"), "could not be converted"),
        ([300], pf.TensorSpec((), "int8"), "could not be converted"),
    ],
)
def test_generator_mismatches_name_the_element(values, signature, message):
    ds = pf.Dataset.from_generator(lambda: iter(values), output_signature=signature)
    with pytest.raises(ElementTypeError, match=message):
        list(ds)
    with pytest.raises(InvalidArgumentError, match=message):  # tf.data's error kind
        list(ds)


def test_generator_argument_errors():
    with pytest.raises(TypeError, match="must be a callable"):
        pf.Dataset.from_generator(iter([1]), output_signature=pf.TensorSpec((), "int64"))
    with pytest.raises(InvalidArgumentError, match="output_signature` is required"):
        pf.Dataset.from_generator(lambda: iter([1]))
    with pytest.raises(InvalidArgumentError, match="must return an iterator"):
        list(pf.Dataset.from_generator(lambda: 5, output_signature=pf.TensorSpec((), "int64")))


def test_generator_is_closed_with_the_iterator():
    closed = []

    def gen():
        try:
            yield from range(100)
        finally:
            closed.append(True)

    it = iter(pf.Dataset.from_generator(gen, output_signature=pf.TensorSpec((), "int64")))
    next(it)
    it.close()
    assert closed == [True]


def test_list_files(tmp_path):
    for name in ["b.txt", "a.txt", "c.csv"]:
        (tmp_path / name).write_text("x")
    files = pf.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert list(files) == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
    shuffled = pf.Dataset.list_files([str(tmp_path / "*.txt"), str(tmp_path / "*.csv")], seed=1)
    assert sorted(shuffled) == sorted([str(tmp_path / n).encode() for n in ["a.txt", "b.txt", "c.csv"]])
    with pytest.raises(InvalidArgumentError, match="no files matched"):
        pf.Dataset.list_files(str(tmp_path / "*.missing"))


def test_zip_arguments():
    a, b = pf.Dataset.range(2), pf.Dataset.range(3)
    assert len(pf.Dataset.zip(a, b)) == 2
    assert len(pf.Dataset.zip(datasets=(a, b))) == 2
    with pytest.raises(TypeError, match="Datasets"):  # a TypeError, as in tf.data
        pf.Dataset.zip((a, [1, 2]))
    with pytest.raises(TypeError):
        pf.Dataset.zip()


def test_from_list_keeps_each_element_and_generalises_shapes():
    from parafeed.checkpoint import check_restores

    ds = pf.experimental.from_list([[1], [2, 3], [4, 5, 6]])
    assert ds.element_spec == pf.TensorSpec((None,), "int32") and ds.cardinality() == 3
    assert [x.tolist() for x in ds] == [[1], [2, 3], [4, 5, 6]]
    assert check_restores(ds) > 0
    pairs = pf.experimental.from_list([(1, "a"), (2, "b")])
    assert [(int(n), s) for n, s in pairs] == [(1, b"a"), (2, b"b")]
    with pytest.raises(InvalidArgumentError, match="should not be empty"):
        pf.experimental.from_list([])
    with pytest.raises(InvalidArgumentError, match="must be a list"):
        pf.experimental.from_list((1, 2))
    with pytest.raises(InvalidArgumentError, match="nested structure"):
        pf.experimental.from_list([(1, 2), (3,)])
    with pytest.raises(ElementTypeError, match="same dtypes"):
        pf.experimental.from_list([1, 2.0])


def test_from_tensor_slices_of_datasets_and_refused_inputs():
    ds = pf.Dataset.from_tensor_slices([pf.Dataset.range(2), pf.Dataset.range(3)])
    assert isinstance(ds.element_spec, structure.DatasetSpec)
    assert [int(x) for x in ds.flat_map(lambda d: d)] == [0, 1, 0, 1, 2]
    with pytest.raises(InvalidArgumentError, match="no components"):
        pf.Dataset.from_tensors(())


@pytest.mark.parametrize("args", [(0, 10), (3, 20, 3), (10, 0, -2), (0, 0), (5, 6)])
def test_range_skips_by_arithmetic_from_any_position(args):
    expected = list(range(*args))
    for taken in range(len(expected) + 1):
        for n in range(len(expected) + 2):
            it = iter(pf.Dataset.range(*args))
            first = [int(next(it)) for _ in range(taken)]
            skipped = it.skip(n)
            assert skipped == min(n, len(expected) - taken)
            assert first + [int(x) for x in it] == expected[:taken] + expected[taken + skipped :]

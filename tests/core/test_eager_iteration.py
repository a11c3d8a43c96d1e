"""What a loop takes from a dataset is what it takes from tf.data's: tensors (`x.numpy()`, `raw[tf.newaxis]`, `print`),
as plain values through `as_numpy_iterator()`; checked against TensorFlow element by element (issue 42: TensorFlow's
data guides failed after the rename on `.numpy()` of an element the loop took)."""

import numpy as np
import pytest
import tensorflow as tf

import parafeed as pf
from parafeed.core.dataset import iterate

pytestmark = pytest.mark.timeout(120)


def example(x, word):
    feature = {
        "x": tf.train.Feature(int64_list=tf.train.Int64List(value=[x])),
        "word": tf.train.Feature(bytes_list=tf.train.BytesList(value=[word])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


PIPELINES = {
    "int64 scalars": lambda lib: lib.data.Dataset.range(4),
    "float and string tuples": lambda lib: lib.data.Dataset.from_tensor_slices(([0.5, 1.5], ["a", "bc"])),
    "dicts of batches": lambda lib: lib.data.Dataset.from_tensor_slices(
        {"x": np.arange(6), "y": np.ones((6, 2))}
    ).batch(4),
    "nested": lambda lib: lib.data.Dataset.range(3).map(lambda x: ((x, {"s": lib.strings.as_string(x)}), x * 2)),
    "sparse": lambda lib: lib.data.Dataset.from_tensors(
        lib.sparse.SparseTensor(indices=[[0, 1], [1, 0]], values=[7, 8], dense_shape=[2, 2])
    ),
    "ragged": lambda lib: lib.data.Dataset.from_tensor_slices(lib.ragged.constant([[1, 2], [3], []])).batch(3),
    "records": lambda lib: lib.data.Dataset.from_tensor_slices([example(1, b"a"), example(2, b"b")]),
}


def leaves(element):
    """The element's leaves as the loop sees them, each through `.numpy()` (SparseTensor: its parts)."""
    out = []
    for leaf in tf.nest.flatten(element, expand_composites=False):
        if hasattr(leaf, "indices") and hasattr(leaf, "dense_shape"):
            out += [leaf.indices.numpy(), leaf.values.numpy(), leaf.dense_shape.numpy()]
        elif hasattr(leaf, "row_splits"):
            out += [leaf.values.numpy(), leaf.row_splits.numpy(), leaf.to_list()]
        else:
            out.append((leaf.numpy(), leaf.shape.as_list(), pf.as_dtype(leaf.dtype).name))
    return out


def equal(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b))) and np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.parametrize("name", list(PIPELINES))
def test_a_loop_gets_tensors_whose_numpy_equals_tensorflows(name):
    theirs = [leaves(e) for e in PIPELINES[name](tf)]
    ours = [leaves(e) for e in PIPELINES[name](pf)]
    assert len(ours) == len(theirs) > 0
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert equal(a, b), f"element {i}: {a} != {b}"


def spec(lib):
    return {"x": lib.io.FixedLenFeature([], lib.int64), "word": lib.io.FixedLenFeature([], lib.string)}


def test_the_tfrecord_guides_idioms_port_by_the_rename():
    results = {}
    for lib in (tf, pf):
        ds = lib.data.Dataset.from_tensor_slices([example(5, b"five")])
        raw = next(iter(ds))
        parsed = lib.io.parse_example(raw[lib.newaxis], spec(lib))  # the data guide's idiom
        message = tf.train.Example.FromString(raw.numpy())  # the TFRecord guide's
        results[lib.__name__] = [parsed["x"].numpy().tolist(), parsed["word"].numpy().tolist(),
                                 message.features.feature["x"].int64_list.value[0]]  # fmt: skip
        for x in ds.map(lambda r, lib=lib: lib.io.parse_single_example(r, spec(lib))):
            results[lib.__name__] += [x["x"].numpy(), x["word"].numpy()]
    assert results["tensorflow"] == results["parafeed"] == [[5], [b"five"], 5, 5, b"five"]


def test_print_and_format_read_as_tensorflows():
    for lib in (tf, pf):
        x, s = next(iter(lib.data.Dataset.from_tensors((np.int32(3), b"ab"))))
        prefix = {"tensorflow": "tf", "parafeed": "pf"}[lib.__name__]
        assert str(x) == f"{prefix}.Tensor(3, shape=(), dtype=int32)"
        assert repr(s) == f"<{prefix}.Tensor: shape=(), dtype=string, numpy=b'ab'>"
        assert f"{x:03d}" == "003" and int(x) + 1 == 4 and bytes(s.numpy()) == b"ab"


def test_as_numpy_iterator_gives_plain_values_as_tensorflows_does():
    for lib in (tf, pf):
        ds = lib.data.Dataset.from_tensor_slices(({"a": [1, 2]}, ["x", "y"]))
        (a, s) = next(ds.as_numpy_iterator())
        assert type(a["a"]) is np.int32 and type(s) is bytes, lib.__name__
    assert type(next(iter(pf.Dataset.range(3)))) is pf.Tensor


def test_tensors_are_views_and_unhashable_as_tensorflows():
    batch = np.arange(6).reshape(2, 3)
    x = next(iter(pf.Dataset.from_tensors(batch)))
    assert np.shares_memory(x, next(iterate(pf.Dataset.from_tensors(batch))))  # (no copy: a view)
    for lib in (tf, pf):
        with pytest.raises(TypeError, match="unhashable"):
            {next(iter(lib.data.Dataset.range(1))): 1}
    assert {next(iter(pf.Dataset.range(1))).numpy(): 1} == {0: 1}  # (TensorFlow's way: the value)


def test_a_scalar_string_is_its_bytes_to_every_buffer_reader_never_pointers():
    """A 0-d string array would give `hashlib`, `b"".join` and `bytes()` NumPy's object pointers: silent wrong data.
    A loop's scalar string is the bytes themselves, with the scalar string tensor's members."""
    import hashlib

    s = next(iter(pf.Dataset.from_tensors(b"value")))
    assert hashlib.sha256(s).digest() == hashlib.sha256(b"value").digest()
    assert b"".join([s, s]) == b"valuevalue" and bytes(s) == b"value" and len(s) == 5 and s.decode() == "value"
    assert s.numpy() == b"value" and type(s.numpy()) is bytes and s.shape == [] and s.ndim == 0
    assert s[pf.newaxis].shape == [1] and s[pf.newaxis].numpy().tolist() == [b"value"]
    numbers = next(iter(pf.Dataset.from_tensors(np.array([1, 2], np.int32))))
    assert bytes(numbers) == b"\x01\0\0\0\x02\0\0\0"
    with pytest.raises(TypeError, match="holds several strings"):
        bytes(next(iter(pf.Dataset.from_tensors([b"a", b"b"]))))


def test_state_skip_and_resume_go_through_the_view():
    ds = pf.Dataset.range(10).shuffle(10, seed=1, reshuffle_each_iteration=False).batch(2)
    it = iter(ds)
    first = next(it).numpy().tolist()
    state = it.get_state()
    rest = [b.numpy().tolist() for b in it]
    again = iter(ds)
    again.set_state(state)
    assert [b.numpy().tolist() for b in again] == rest
    skipped = iter(ds)
    assert skipped.skip(1) == 1 and next(skipped).numpy().tolist() == rest[0]
    saved = pf.distribute.save_state(iter(ds), steps=0)
    resumed = pf.distribute.resume(ds, saved)
    assert isinstance(next(resumed), pf.Tensor)
    assert type(next(pf.distribute.resume(ds, saved, numpy=True))) is np.ndarray
    assert first == next(pf.distribute.resume(ds, saved, numpy=True)).tolist()
    epochs = pf.checkpoint.Epochs(ds)
    assert isinstance(next(epochs.next()), pf.Tensor)


def test_the_adapters_take_the_plain_values():
    import torch

    ds = pf.Dataset.range(6).batch(3)
    batches = list(ds.to_torch())
    assert all(type(b) is torch.Tensor for b in batches) and [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5]]
    assert [b.numpy().tolist() for b in ds.to_tf()] == [[0, 1, 2], [3, 4, 5]]


def test_the_loops_iterator_is_the_root_steps_with_its_members():
    """What the root step's iterator has besides (an offload's workers, its executor) is reached through the loop's
    iterator, private names included; a view not yet built (as while unpickling) has no member instead of looking
    itself up without end."""
    from parafeed.core.iterator import ElementView

    it = iter(pf.Dataset.range(3))
    root = it._root
    root._probe = "kept"
    assert it._probe == "kept" and it.run is root.run
    assert not hasattr(ElementView.__new__(ElementView), "_probe")

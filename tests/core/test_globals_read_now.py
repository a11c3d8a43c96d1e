"""A map function's global constants are read when ``map()`` is called, as TensorFlow reads them when it traces the
function (issue 42): the "Load text" tutorial's loop at module level gives each file its own label. Constants (numbers,
strings, ``None``, NumPy arrays and scalars, tuples of them) are read then, arrays copied; lists, dicts, modules,
functions and other objects are read at run time."""

import os
import types

import numpy as np
import pytest

import parafeed as pf
from parafeed.core import globals_read
from parafeed.core.globals_read import globals_read_now

pytestmark = pytest.mark.timeout(120)

FILE_NAMES = ["cowper.txt", "derby.txt", "butler.txt"]
LINES = {"cowper.txt": [b"a0", b"a1"], "derby.txt": [b"b0"], "butler.txt": [b"c0", b"c1", b"c2"]}
EXPECTED = [(b"a0", 0), (b"a1", 0), (b"b0", 1), (b"c0", 2), (b"c1", 2), (b"c2", 2)]

# The "Load text" tutorial's cells (tensorflow/docs site/en/tutorials/load_data/text.ipynb), with `tf` the module the
# namespace gives: run at a namespace's top level, `i` is a global of the lambda.
TUTORIAL = """
def labeler(example, index):
  return example, tf.cast(index, tf.int64)

labeled_data_sets = []

for i, file_name in enumerate(FILE_NAMES):
  lines_dataset = tf.data.TextLineDataset(str(parent/file_name)) if TEXT_FILES else (
      tf.data.Dataset.from_tensor_slices(LINES[file_name]))
  labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))
  labeled_data_sets.append(labeled_dataset)

all_labeled_data = labeled_data_sets[0]
for labeled_dataset in labeled_data_sets[1:]:
  all_labeled_data = all_labeled_data.concatenate(labeled_dataset)
"""


def labeler(example, index):
    return example, pf.cast(index, pf.int64)


# (a) the tutorial's loop, here at module level: `i` is a module global
labeled_data_sets = []
for i, file_name in enumerate(FILE_NAMES):
    lines_dataset = pf.Dataset.from_tensor_slices(LINES[file_name])
    labeled_data_sets.append(lines_dataset.map(lambda ex: labeler(ex, i)))
all_labeled_data = labeled_data_sets[0]
for labeled_dataset in labeled_data_sets[1:]:
    all_labeled_data = all_labeled_data.concatenate(labeled_dataset)

# (f) the same with a parallel map, run on worker processes by the test's options
parallel_data = None
for i, file_name in enumerate(FILE_NAMES):
    part = pf.Dataset.from_tensor_slices(LINES[file_name]).map(lambda ex: labeler(ex, i), num_parallel_calls=1)
    parallel_data = part if parallel_data is None else parallel_data.concatenate(part)


def pairs(ds):
    return [(x.numpy() if hasattr(x, "numpy") else bytes(x), int(y)) for x, y in ds]  # (TensorFlow's or parafeed's)


def tutorial_namespace(tf, **extra):
    return {"__name__": "__main__", "tf": tf, "FILE_NAMES": FILE_NAMES, "LINES": LINES, "TEXT_FILES": False, **extra}


def test_the_tutorials_loop_at_module_level_labels_each_file_as_tensorflow_does():
    assert i == 2  # the loop's last value, which every element saw before issue 42
    assert pairs(all_labeled_data) == EXPECTED
    assert pairs(all_labeled_data) == EXPECTED  # (a second pass: the values were read once, when map() was called)
    tf = pytest.importorskip("tensorflow")
    namespace = tutorial_namespace(tf)
    exec(TUTORIAL, namespace)
    assert pairs(namespace["all_labeled_data"]) == EXPECTED  # TensorFlow, the same code


def test_the_tutorials_cells_in_a_notebook_namespace(tmp_path):
    for name in FILE_NAMES:  # the text files themselves, read with TextLineDataset as the tutorial does
        (tmp_path / name).write_bytes(b"\n".join(LINES[name]) + b"\n")
    results = {}
    for module in ("parafeed", "tensorflow"):
        tf = pf if module == "parafeed" else pytest.importorskip("tensorflow")
        namespace = tutorial_namespace(tf, parent=tmp_path, TEXT_FILES=True)
        for cell in TUTORIAL.split("\n\n"):  # one cell after another, in one namespace, as a notebook runs them
            exec(cell, namespace)
        namespace["i"] = 99  # a later cell reuses the name
        results[module] = pairs(namespace["all_labeled_data"])
    assert results["parafeed"] == results["tensorflow"] == EXPECTED


SCALE = 2


def scaled(x):
    return x * SCALE


def twice_scaled(x):  # a helper that reaches the one that reads the constant
    return scaled(scaled(x))


def test_a_constant_read_by_a_helper_is_read_when_map_is_called():
    global SCALE
    ds = pf.Dataset.range(3).map(lambda x: scaled(x) + 1)
    ds2 = pf.Dataset.range(3).map(twice_scaled)
    SCALE = 10
    try:
        assert [int(x) for x in ds] == [1, 3, 5]
        assert [int(x) for x in ds2] == [0, 4, 8]
        assert [int(x) for x in pf.Dataset.range(3).map(scaled)] == [0, 10, 20]  # a map made now reads it now
    finally:
        SCALE = 2
    tf = pytest.importorskip("tensorflow")
    assert [int(x) for x in tf.data.Dataset.range(3).map(lambda x: scaled(x) + 1)] == [1, 3, 5]


def test_the_users_functions_and_globals_are_not_changed():
    fn = lambda x: scaled(x) + SCALE  # noqa: E731
    read = globals_read_now(fn)
    assert read is not fn and read(1) == 4
    assert fn.__globals__ is globals() and scaled.__globals__ is globals() and globals()["scaled"] is scaled
    assert read.__globals__ is not globals() and read.__name__ == fn.__name__ and read.__code__ is fn.__code__
    helper = read.__globals__["scaled"]
    assert helper is not scaled and helper.__code__ is scaled.__code__ and helper.__qualname__ == "scaled"
    assert type(read.__globals__) is dict  # every name it reads is held: a plain dict, which Python is fastest with
    assert globals_read_now(read)(1) == 4  # (read again: the same values)
    mixed = globals_read_now(lambda x: labeler(x, SCALE))  # `labeler` is read at run time: a dict over the module's
    assert type(mixed.__globals__) is not dict and "labeler" in mixed.__globals__ and "pf" in mixed.__globals__
    assert globals_read_now(mixed) is mixed  # (read once: nothing left to read)
    plain = lambda x: np.add(x, len([x]))  # noqa: E731  # no constant global: the function itself
    assert globals_read_now(plain) is plain and globals_read_now(np.add) is np.add


MEANS = np.array([1.0, 2.0])


def test_an_array_changed_in_place_after_map_is_seen_as_it_was(monkeypatch):
    ds = pf.Dataset.from_tensor_slices(np.zeros((2, 2))).map(lambda x: x - MEANS)
    tf = pytest.importorskip("tensorflow")
    tf_ds = tf.data.Dataset.from_tensor_slices(np.zeros((2, 2))).map(lambda x: x - MEANS)
    monkeypatch.setattr(globals_read, "COPY_LIMIT", 8)  # an array over the limit is read at run time
    big = pf.Dataset.from_tensor_slices(np.zeros((2, 2))).map(lambda x: x - MEANS)
    try:
        MEANS[:] = [100.0, 100.0]  # in place: TensorFlow's constant is a copy, so is parafeed's
        assert [x.tolist() for x in ds] == [[-1.0, -2.0]] * 2
        assert [x.numpy().tolist() for x in tf_ds] == [[-1.0, -2.0]] * 2
        assert [x.tolist() for x in big] == [[-100.0, -100.0]] * 2
    finally:
        MEANS[:] = [1.0, 2.0]


VOCAB = {"a": 1}
TABLE = [10, 20]
DEFAULT = -1


def test_lists_and_dicts_are_read_at_run_time():
    global VOCAB
    ds = pf.Dataset.from_tensor_slices([b"a", b"b"]).map(lambda w: VOCAB.get(w.decode(), DEFAULT))
    rows = pf.Dataset.range(2).map(lambda k: TABLE[int(k)] + DEFAULT)
    read = globals_read_now(lambda w: VOCAB.get(w, DEFAULT))
    assert dict.__contains__(read.__globals__, "DEFAULT") and not dict.__contains__(read.__globals__, "VOCAB")
    VOCAB["b"] = 2  # changed in place: seen
    TABLE[1] = 30
    assert [int(x) for x in ds] == [1, 2] and [int(x) for x in rows] == [9, 29]
    saved, VOCAB = VOCAB, {"a": 5}  # assigned anew: seen too (only constants are read when map() is called)
    try:
        assert [int(x) for x in ds] == [5, -1]
    finally:
        VOCAB, TABLE[1] = saved, 20
        del VOCAB["b"]


COUNTER = 0


def count(x):
    global COUNTER
    COUNTER += 1
    return x + COUNTER


def test_a_global_a_function_assigns_stays_live():
    global COUNTER
    fn = lambda x: count(x) + COUNTER  # noqa: E731  # COUNTER is assigned by count: read at run time
    assert globals_read_now(fn) is fn and globals_read_now(count) is count
    COUNTER = 0
    assert [int(x) for x in pf.Dataset.range(2).map(fn)] == [2, 5]  # (1 + 1, then 3 + 2)


def test_partials_methods_and_tensor_functions_are_read_too():
    import functools

    class Holder:
        def apply(self, x):
            return x * SCALE

    for fn in (functools.partial(scaled), Holder().apply, pf.function(scaled)):
        read = globals_read_now(fn)
        assert type(read) is type(fn) and read is not fn and read(3) == 6


def test_the_process_executor_gets_the_values_read_when_map_was_called():
    options = pf.data.Options()
    options.executor = "process"
    assert pairs(parallel_data.with_options(options)) == EXPECTED  # module-level maps, on worker processes
    cell = TUTORIAL.replace("lambda ex: labeler(ex, i))", "lambda ex: labeler(ex, i) + (os.getpid(),), "
                            "num_parallel_calls=1, executor='process')")  # fmt: skip
    namespace = tutorial_namespace(pf, os=os)
    exec(cell, namespace)  # (functions of "__main__": cloudpickle sends them by value, with the values read)
    rows = list(namespace["all_labeled_data"])
    assert [(bytes(x), int(y)) for x, y, _ in rows] == EXPECTED
    assert all(int(pid) != os.getpid() for _, _, pid in rows)


def test_a_rewritten_function_pickles_with_its_values():
    cloudpickle = pytest.importorskip("cloudpickle")
    namespace = {"__name__": "__main__", "np": np, "K": np.arange(3)}
    exec("def f(x):\n    return np.sum(x + K)\n", namespace)
    read = globals_read_now(namespace["f"])
    namespace["K"][:] = 0
    copy = cloudpickle.loads(cloudpickle.dumps(read))
    assert isinstance(copy, types.FunctionType) and int(copy(0)) == int(read(0)) == 3

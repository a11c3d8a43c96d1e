import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.core import graph
from parafeed.errors import ArgumentTypeError, ElementTypeError, InvalidArgumentError

D = pf.Dataset


def ints(ds):
    return [int(x) for x in ds]


def two_ranges(seed=1, **kwargs):
    return D.sample_from_datasets([D.range(0, 50), D.range(100, 150)], seed=seed, **kwargs)


# ---------------------------------------------------------------------------------------------- sample_from_datasets


def test_every_element_once_each_input_in_order():
    out = ints(two_ranges())
    assert sorted(out) == list(range(50)) + list(range(100, 150))
    assert [x for x in out if x < 100] == list(range(50)) and [x for x in out if x >= 100] == list(range(100, 150))
    assert out != sorted(out)


def test_seed_fixes_the_order_across_runs_and_objects():
    ds = two_ranges(seed=7)
    assert ints(ds) == ints(ds) == ints(two_ranges(seed=7))
    assert ints(two_ranges(seed=8)) != ints(ds)
    epochs = ints(ds.repeat(2))
    assert epochs[:100] == epochs[100:]  # no rerandomizing by default, as tf.data


def test_unseeded_differs_between_dataset_objects_but_not_iterations():
    ds = two_ranges(seed=None)
    assert ints(ds) == ints(ds)
    assert ints(two_ranges(seed=None)) != ints(ds)


def test_rerandomize_each_iteration():
    ds = two_ranges(seed=7, rerandomize_each_iteration=True)
    first, second = ints(ds), ints(ds)
    assert first != second and sorted(first) == sorted(second)
    epochs = ints(ds.repeat(2))
    assert epochs[:100] != epochs[100:]


def test_weights_give_the_frequencies():
    datasets = [D.from_tensors(np.int64(i)).repeat() for i in range(3)]
    out = ints(D.sample_from_datasets(datasets, [0.6, 0.3, 0.1], seed=3).take(5000))
    assert np.allclose(np.bincount(out) / 5000, [0.6, 0.3, 0.1], atol=0.02)


def test_dry_input_is_dropped_and_the_rest_renormalised():
    datasets = [D.range(10), D.from_tensors(np.int64(-1)).repeat(200)]
    out = ints(D.sample_from_datasets(datasets, [0.99, 0.01], seed=2))
    assert out.count(-1) == 200 and [x for x in out if x >= 0] == list(range(10))


def test_stop_on_empty_dataset_ends_with_the_first_dry_input():
    datasets = [D.from_tensors(np.int64(-1)), D.range(1000)]
    out = ints(D.sample_from_datasets(datasets, [0.5, 0.5], seed=4, stop_on_empty_dataset=True))
    rest = [x for x in out if x != -1]
    assert out.count(-1) == 1 and rest == list(range(len(rest))) and len(rest) < 100
    never = ints(D.sample_from_datasets(datasets, [0.5, 0.5], seed=4))
    assert len(never) == 1001


def test_degenerate_weights():
    a, b = D.range(3), D.range(10, 13)
    assert D.sample_from_datasets([a, b], [1.0, 0.0]) is a  # as tf.data: the dataset itself
    assert D.sample_from_datasets([a], seed=1) is a
    none = D.sample_from_datasets([a, b], [0.0, 0.0])
    assert ints(none) == [] and none.cardinality() == 0


def test_weights_dataset_picks_each_element_by_its_own_weights():
    weights = D.from_tensor_slices(np.array([[1.0, 0.0], [0.0, 1.0]] * 3))
    out = ints(D.sample_from_datasets([D.range(10), D.range(100, 110)], weights, seed=1))
    assert out == [0, 100, 1, 101, 2, 102]  # ends with the weights


def test_weights_dataset_errors():
    inputs = [D.range(3), D.range(10, 13)]
    with pytest.raises(InvalidArgumentError, match="all zeros"):
        ints(D.sample_from_datasets(inputs, D.from_tensors(np.zeros(2)).repeat()))
    with pytest.raises(InvalidArgumentError, match="vectors of 2"):
        D.sample_from_datasets(inputs, D.from_tensors(np.ones(3)).repeat())
    unknown = D.from_generator(lambda: iter([np.ones(3)]), output_signature=pf.TensorSpec((None,), np.float64))
    with pytest.raises(InvalidArgumentError, match="2 finite weights"):
        ints(D.sample_from_datasets(inputs, unknown))
    with pytest.raises(ElementTypeError, match="float32 or float64"):
        D.sample_from_datasets(inputs, D.from_tensors(np.ones(2, np.int32)).repeat())
    with pytest.raises(InvalidArgumentError, match="vectors of 2"):
        D.sample_from_datasets(inputs, D.from_tensors(np.ones((1, 2))).repeat())


def test_argument_errors():
    inputs = [D.range(3), D.range(10, 13)]
    with pytest.raises(InvalidArgumentError, match="should not be empty"):
        D.sample_from_datasets([])
    with pytest.raises(InvalidArgumentError, match="same length"):
        D.sample_from_datasets(inputs, [0.5, 0.25, 0.25])
    with pytest.raises(ArgumentTypeError, match="float32 or float64"):
        D.sample_from_datasets(inputs, [1, 1])
    with pytest.raises(ArgumentTypeError, match="list of Datasets"):
        D.sample_from_datasets([D.range(3), 5])
    with pytest.raises(ElementTypeError, match="compatible element specs"):
        D.sample_from_datasets([D.range(3), D.from_tensors(b"a")])
    with pytest.raises(ElementTypeError, match="compatible element specs"):
        D.sample_from_datasets([D.range(3), D.range(3).map(lambda x: {"a": x})])


def test_spec_merges_shapes_and_cardinality_follows_tf_data():
    ds = D.sample_from_datasets([D.from_tensors([1, 2]), D.from_tensors([3, 4, 5])], seed=1)
    assert ds.element_spec == pf.TensorSpec((None,), np.int32)
    assert D.sample_from_datasets([D.from_tensors([1]), D.from_tensors([[1]])]).element_spec.shape is None
    assert D.sample_from_datasets([D.range(3), D.range(4)]).cardinality() == pf.UNKNOWN
    assert D.sample_from_datasets([D.range(3), D.range(4).repeat()]).cardinality() == pf.INFINITE


def test_experimental_names():
    ds = pf.experimental.sample_from_datasets([D.range(3), D.range(10, 13)], seed=1)
    assert sorted(ints(ds)) == [0, 1, 2, 10, 11, 12]
    choices = D.from_tensor_slices(np.int64([1, 0]))
    assert ints(pf.experimental.choose_from_datasets([D.range(3), D.range(10, 13)], choices)) == [10, 0]


# ---------------------------------------------------------------------------------------------- choose_from_datasets


def test_choose_exact_order_and_dry_inputs():
    choices = D.from_tensor_slices(np.int64([0, 0, 0, 1, 0, 1, 1]))
    inputs = [D.range(2), D.range(10, 12)]
    assert ints(D.choose_from_datasets(inputs, choices, stop_on_empty_dataset=False)) == [0, 1, 10, 11]
    assert ints(D.choose_from_datasets(inputs, choices)) == [0, 1]


def test_choose_errors():
    inputs = [D.range(2), D.range(10, 12)]
    it = iter(D.choose_from_datasets(inputs, D.from_tensor_slices(np.int64([1, 2]))))
    assert int(next(it)) == 10
    with pytest.raises(InvalidArgumentError, match="out of range: 2 >= 2"):
        next(it)
    with pytest.raises(ElementTypeError, match="scalar int64"):
        D.choose_from_datasets(inputs, D.range(2, output_type=np.int32))
    with pytest.raises(ArgumentTypeError, match="choice_dataset"):
        D.choose_from_datasets(inputs, [0, 1])


def test_graph_sees_inputs_and_selector():
    inputs = [D.range(2), D.range(10, 12)]
    choices = D.from_tensor_slices(np.int64([1, 0]))
    ds = D.choose_from_datasets(inputs, choices)
    assert ds.parents == (*inputs, choices) and ds.inputs == tuple(inputs)
    assert set(map(id, graph.sources(ds))) == {id(d) for d in (*inputs, choices)}
    swapped = ds.with_parents(inputs[1], inputs[0], choices)
    assert ints(swapped) == [0, 10] and ints(ds) == [10, 0]


# ---------------------------------------------------------------------------------------------- resuming


RESUMABLE = {
    "constant": lambda: D.sample_from_datasets([D.range(30), D.range(100, 105)], [0.3, 0.7], seed=5),
    "unseeded-rerandomized": lambda: D.sample_from_datasets(
        [D.range(20), D.range(100, 120).shuffle(5, seed=1)], rerandomize_each_iteration=True
    ),
    "stop": lambda: D.sample_from_datasets([D.range(20), D.range(100, 140)], seed=5, stop_on_empty_dataset=True),
    "weights-dataset": lambda: D.sample_from_datasets(
        [D.range(30), D.range(100, 130)], D.from_tensors(np.array([0.2, 0.8])).repeat(40), seed=2
    ),
    "choose": lambda: D.choose_from_datasets(
        [D.range(10), D.range(100, 110).batch(1).unbatch()],
        D.from_tensor_slices(np.int64([0, 1, 1, 0] * 6)),
        stop_on_empty_dataset=False,
    ),
    "repeated": lambda: D.sample_from_datasets([D.range(5), D.range(10, 15)], seed=3).repeat(3),
}


@pytest.mark.parametrize("name", sorted(RESUMABLE))
def test_resumes_exactly_at_every_position(name):
    assert pf.checkpoint.check_restores(RESUMABLE[name]()) > 0


def test_round_trip_mid_stream_after_an_input_ran_dry():
    ds = D.sample_from_datasets([D.range(3), D.range(100, 160)], [0.5, 0.5], seed=9)
    it = iter(ds)
    taken = [int(next(it)) for _ in range(40)]
    assert {0, 1, 2} <= set(taken)  # the first input is gone: its state is saved as dry
    state = json.loads(json.dumps(it.get_state()))
    rest = ints(it)
    resumed = iter(ds)
    resumed.set_state(state)
    assert ints(resumed) == rest


def test_two_iterators_do_not_affect_each_other():
    ds = two_ranges(seed=11)
    alone = ints(ds)
    a, b = iter(ds), iter(ds)
    got_a, got_b = [], []
    for _ in range(100):
        got_a.append(int(next(a)))
        got_b.append(int(next(b)))
    assert got_a == got_b == alone


def test_picks_that_only_choose_dry_inputs_end_with_an_error_not_a_hang(monkeypatch):
    from parafeed.sources import mixture

    monkeypatch.setattr(mixture, "DRY_PICKS", 1000)
    choices = pf.Dataset.from_tensors(np.int64(0)).repeat()
    ds = pf.Dataset.choose_from_datasets([pf.Dataset.range(2), pf.Dataset.range(10, 13)], choices, False)
    it = iter(ds)
    assert [int(next(it)) for _ in range(2)] == [0, 1]
    with pytest.raises(pf.errors.InvalidArgumentError, match="picks in a row chose inputs that had run dry"):
        next(it)
    weights = pf.Dataset.from_tensors(np.array([1.0, 0.0], np.float32)).repeat()
    with pytest.raises(pf.errors.InvalidArgumentError, match="give the remaining inputs weight"):
        list(pf.Dataset.sample_from_datasets([pf.Dataset.range(2), pf.Dataset.range(3)], weights, seed=1))

"""Cases ported from tf.data's kernel tests of mixing datasets and resampling: sample_from_datasets_test.py,
choose_from_datasets_test.py, rejection_resample_test.py and the experimental directed_interleave_dataset_test.py.

Random picks cannot match TensorFlow's Philox stream (docs/porting.md#mixture-random-streams), so cases of random
order compare what both libraries must agree on: a statistic the kernel test checks (returned by a zero-argument
function), the multiset of elements (``ordered=False``), or exact outputs where the weights leave no choice.
"""

from __future__ import annotations

import numpy as np

from tests.differential.kernel.harness import kcase

WEIGHT_TYPES = {"list": "list", "tensor": "tensor", "dataset": "dataset"}
RAND_PROBS = np.random.RandomState(7).random_sample(5)
RAND_PROBS = RAND_PROBS / RAND_PROBS.sum()
CHOICES = np.random.RandomState(3).randint(3, size=15).astype(np.int64)


def weights_of_type(L, probs, kind):
    """The kernel tests' ``_get_weights_of_type``: a list (an array), a tensor, or a dataset repeating them.

    parafeed has no tensors: a NumPy array stands for ``tf.constant`` (both keep datasets of weight 0, as
    tf.data does for a tensor, only where every weight is positive; cases with zero weights use list and dataset).
    """
    probs = np.asarray(probs)
    if kind == "tensor":
        return L.tf.constant(probs) if L.name == "tf" else probs
    if kind == "dataset":
        return L.Dataset.from_tensors(probs).repeat()
    return probs


def items(L, ds):
    """All elements, as NumPy values."""
    return list(ds.as_numpy_iterator()) if L.name == "tf" else list(ds)


def described(ds):
    """A random dataset's cardinality and element dtypes, as a value to compare (its elements cannot be)."""
    return lambda: (int(ds.cardinality()), tuple(_dtype_name(s.dtype).encode() for s in _leaves(ds.element_spec)))


def _dtype_name(dtype):
    return getattr(dtype, "name", None) if not isinstance(dtype, np.dtype) else dtype.name


def _leaves(spec):
    if isinstance(spec, tuple):
        return [leaf for s in spec for leaf in _leaves(s)]
    return [spec]


def chi2(expected, actual):
    diff = np.asarray(actual) - np.asarray(expected)
    return float(np.sum(diff * diff / np.asarray(expected)))


# ------------------------------------------------------------------------------------ sample_from_datasets_test.py


SAMPLE_PARAMS = {f"{name}-{kind}": (probs, kind)
                 for name, probs in (("skewed", [0.85, 0.05, 0.1]), ("random", RAND_PROBS), ("one", [1.0]))
                 for kind in WEIGHT_TYPES}  # fmt: skip


@kcase("sample_from_datasets_test.py::testSampleFromDatasets", params=SAMPLE_PARAMS)
def sample_frequencies(L, tmp, param):
    probs, kind = param
    datasets = [L.Dataset.from_tensors(np.int64(i)).repeat() for i in range(len(probs))]
    ds = L.Dataset.sample_from_datasets(datasets, weights_of_type(L, probs, kind), seed=1619).take(5000)

    def check():
        freqs = np.bincount([int(x) for x in items(L, ds)], minlength=len(probs)) / 5000
        return chi2(probs, freqs) < 1e-2

    return check


def three_inputs(L):
    return [
        L.Dataset.from_tensors(np.int64(-1)),
        L.Dataset.from_tensors(np.int64(1)).repeat(),
        L.Dataset.range(10).repeat(),
    ]


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsStoppingOnEmptyDataset", params=WEIGHT_TYPES)
def sample_stops_on_empty(L, tmp, kind):
    weights = weights_of_type(L, [0.5, 0.1, 0.4], kind)
    ds = L.Dataset.sample_from_datasets(three_inputs(L), weights=weights, seed=5, stop_on_empty_dataset=True)
    return lambda: [int(x) for x in items(L, ds)].count(-1)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsSkippingEmptyDataset", params=WEIGHT_TYPES)
def sample_skips_empty(L, tmp, kind):
    weights = weights_of_type(L, [0.5, 0.1, 0.4], kind)
    ds = L.Dataset.sample_from_datasets(three_inputs(L), weights=weights, seed=5, stop_on_empty_dataset=False)
    ds = ds.take(100)

    def check():
        got = [int(x) for x in items(L, ds)]
        return len(got), got.count(-1)

    return check


@kcase(
    "sample_from_datasets_test.py::testSampleFromDatasetsWithZeroWeight", params={"list": "list", "dataset": "dataset"}
)
def sample_zero_weight(L, tmp, kind):
    datasets = [L.Dataset.from_tensors(-1).repeat(2), L.Dataset.from_tensors(1).repeat(2)]
    weights = weights_of_type(L, [0.0, 1.0], kind)
    return L.Dataset.sample_from_datasets(datasets, weights=weights, stop_on_empty_dataset=True)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsWithZeroWeight[tensor]", differs="mixture-random-streams")
def sample_zero_weight_tensor(L, tmp):
    # a tf.constant keeps the dataset of weight 0 (cardinality unknown); parafeed's array drops it (cardinality 2)
    datasets = [L.Dataset.from_tensors(-1).repeat(2), L.Dataset.from_tensors(1).repeat(2)]
    weights = weights_of_type(L, [0.0, 1.0], "tensor")
    return L.Dataset.sample_from_datasets(datasets, weights=weights, stop_on_empty_dataset=True)


@kcase("sample_from_datasets_test.py::testSampleFromEmptyDataset", params={"list": "list", "dataset": "dataset"})
def sample_from_empty(L, tmp, kind):
    datasets = [L.Dataset.range(0), L.Dataset.range(1).repeat()]
    weights = weights_of_type(L, [1.0, 0.0], kind)
    return L.Dataset.sample_from_datasets(datasets, weights=weights, stop_on_empty_dataset=True)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsSkippingDatasetsWithZeroWeight")
def sample_skips_zero_weight(L, tmp):
    datasets = [L.Dataset.from_tensors(-1).repeat(), L.Dataset.from_tensors(1)]
    return L.Dataset.sample_from_datasets(datasets, weights=np.asarray([0.0, 1.0]), stop_on_empty_dataset=False)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsAllWeightsAreZero")
def sample_all_weights_zero(L, tmp):
    datasets = [L.Dataset.from_tensors(-1).repeat(), L.Dataset.from_tensors(1).repeat()]
    return L.Dataset.sample_from_datasets(datasets, weights=np.asarray([0.0, 0.0]), stop_on_empty_dataset=False)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsCardinality")
def sample_cardinality_infinite(L, tmp):
    ds1 = L.Dataset.from_tensors([1.0]).repeat()
    ds2 = L.Dataset.from_tensors([2.0]).repeat()
    return described(L.Dataset.sample_from_datasets([ds1, ds2]))


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsNested", ordered=False)
def sample_nested_windows(L, tmp):
    ds1 = L.Dataset.range(10).window(2)
    ds2 = L.Dataset.range(10, 20).window(2)
    return L.Dataset.sample_from_datasets([ds1, ds2], weights=[0.3, 0.7], seed=2).flat_map(lambda x: x)


RERANDOMIZE = {"none": None, "true": True, "false": False}


def halves_equal(L, rerandomize, repeat):
    ds = L.Dataset.sample_from_datasets(
        [L.Dataset.range(0, 10), L.Dataset.range(100, 110)], seed=42, weights=[0.5, 0.5],
        stop_on_empty_dataset=True, rerandomize_each_iteration=rerandomize,
    )  # fmt: skip
    if repeat:
        both = items(L, ds.repeat(2))
        return both[: len(both) // 2] == both[len(both) // 2 :]
    return items(L, ds) == items(L, ds)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsRerandomizeEachIterationEpochs", params=RERANDOMIZE)
def sample_rerandomize_iterations(L, tmp, rerandomize):
    return lambda: halves_equal(L, rerandomize, repeat=False)


@kcase("sample_from_datasets_test.py::testSampleFromDatasetsRerandomizeRepeatEpochs", params=RERANDOMIZE)
def sample_rerandomize_repeat(L, tmp, rerandomize):
    return lambda: halves_equal(L, rerandomize, repeat=True)


@kcase("sample_from_datasets_test.py::testErrors[length]")
def sample_weights_length(L, tmp):
    return L.Dataset.sample_from_datasets([L.Dataset.range(10), L.Dataset.range(20)], weights=[0.25] * 4)


@kcase("sample_from_datasets_test.py::testErrors[int-weights]")
def sample_int_weights(L, tmp):
    return L.Dataset.sample_from_datasets([L.Dataset.range(10), L.Dataset.range(20)], weights=[1, 1])


@kcase("sample_from_datasets_test.py::testErrors[incompatible]")
def sample_incompatible(L, tmp):
    return L.Dataset.sample_from_datasets([L.Dataset.from_tensors(0), L.Dataset.from_tensors(0.0)])


@kcase("sample_from_datasets_test.py::testErrors[empty]")
def sample_no_datasets(L, tmp):
    return L.Dataset.sample_from_datasets(datasets=[], weights=[])


@kcase("sample_from_datasets_test.py::testErrors[structure]")
def sample_incompatible_structure(L, tmp):
    return L.Dataset.sample_from_datasets([L.Dataset.range(3), L.Dataset.range(3).map(lambda x: (x, x))])


@kcase("sample_from_datasets_test.py::testErrors[zero-weight-unchecked]")
def sample_dropped_dataset_unchecked(L, tmp):
    # a dataset of weight 0 is dropped before the structure check: the other one is the result
    return L.Dataset.sample_from_datasets([L.Dataset.range(3), L.Dataset.from_tensors(b"a")], weights=[1.0, 0.0])


@kcase("sample_from_datasets_test.py::SampleFromDatasetsCheckpointTest", ordered=False)
def sample_checkpoint_pipeline(L, tmp):
    datasets = [L.Dataset.from_tensors(i).repeat(None) for i in range(2)]
    ds = L.Dataset.sample_from_datasets(datasets, [0.5, 0.5], seed=1813).take(100)

    def check():
        got = [int(x) for x in items(L, ds)]
        return len(got), sorted(set(got))

    return check


CARDINALITY = {
    "finite": lambda L: [L.Dataset.range(3), L.Dataset.range(10, 15)],
    "infinite-and-finite": lambda L: [L.Dataset.range(3), L.Dataset.range(5).repeat()],
    "unknown": lambda L: [L.Dataset.range(3), L.Dataset.range(5).filter(lambda x: x > 1)],
}


@kcase("directed_interleave_dataset_test.py::testSampleFromDatasetsCardinality[stop]", params=CARDINALITY)
def sample_cardinality_rules(L, tmp, inputs):
    return described(L.Dataset.sample_from_datasets(inputs(L), seed=1, stop_on_empty_dataset=True))


# ------------------------------------------------------------------------------------ choose_from_datasets_test.py


WORDS = [b"foo", b"bar", b"baz"]


@kcase("choose_from_datasets_test.py::testChooseFromDatasets")
def choose_words(L, tmp):
    datasets = [L.Dataset.from_tensors(w).repeat() for w in WORDS]
    return L.Dataset.choose_from_datasets(datasets, L.Dataset.from_tensor_slices(CHOICES))


def two_foos(L):
    return [
        L.Dataset.from_tensors(b"foo").repeat(2),
        L.Dataset.from_tensors(b"bar").repeat(),
        L.Dataset.from_tensors(b"baz").repeat(),
    ]


STEPS = np.asarray([0, 0, 0, 1, 1, 1, 2, 2, 2], dtype=np.int64)


@kcase("choose_from_datasets_test.py::testChooseFromDatasetsStoppingOnEmptyDataset")
def choose_stops_on_empty(L, tmp):
    choices = L.Dataset.from_tensor_slices(STEPS)
    return L.Dataset.choose_from_datasets(two_foos(L), choices, stop_on_empty_dataset=True)


@kcase("choose_from_datasets_test.py::testChooseFromDatasetsSkippingEmptyDatasets")
def choose_skips_empty(L, tmp):
    choices = L.Dataset.from_tensor_slices(STEPS)
    return L.Dataset.choose_from_datasets(two_foos(L), choices, stop_on_empty_dataset=False)


@kcase("choose_from_datasets_test.py::testChooseFromDatasetsChoiceDatasetIsEmpty")
def choose_empty_choices(L, tmp):
    datasets = [L.Dataset.from_tensors(w).repeat() for w in WORDS]
    return L.Dataset.choose_from_datasets(datasets, choice_dataset=L.Dataset.range(0), stop_on_empty_dataset=False)


@kcase("choose_from_datasets_test.py::testChooseFromDatasetsNested")
def choose_nested_windows(L, tmp):
    ds1 = L.Dataset.range(10).window(2)
    ds2 = L.Dataset.range(10, 20).window(2)
    return L.Dataset.choose_from_datasets([ds1, ds2], L.Dataset.range(2).repeat(5)).flat_map(lambda x: x)


@kcase("choose_from_datasets_test.py::testErrors[float-choices]")
def choose_float_choices(L, tmp):
    datasets = [L.Dataset.from_tensors(0), L.Dataset.from_tensors(1)]
    return L.Dataset.choose_from_datasets(datasets, choice_dataset=L.Dataset.from_tensors(1.0))


@kcase("choose_from_datasets_test.py::testErrors[vector-choices]")
def choose_vector_choices(L, tmp):
    datasets = [L.Dataset.from_tensors(0), L.Dataset.from_tensors(1)]
    return L.Dataset.choose_from_datasets(datasets, choice_dataset=L.Dataset.from_tensors([1.0]))


@kcase("choose_from_datasets_test.py::testErrors[out-of-range]")
def choose_out_of_range(L, tmp):
    return L.Dataset.choose_from_datasets([L.Dataset.from_tensors(0)], L.Dataset.from_tensors(np.int64(1)))


@kcase("choose_from_datasets_test.py::testErrors[empty]")
def choose_no_datasets(L, tmp):
    return L.Dataset.choose_from_datasets(datasets=[], choice_dataset=L.Dataset.from_tensors(1.0))


@kcase("choose_from_datasets_test.py::testErrors[not-a-dataset]")
def choose_none_choices(L, tmp):
    return L.Dataset.choose_from_datasets([L.Dataset.range(42)], choice_dataset=None)


@kcase("choose_from_datasets_test.py::testErrors[int32-choices]")
def choose_int32_choices(L, tmp):
    return L.Dataset.choose_from_datasets([L.Dataset.range(3)], L.Dataset.range(3, output_type=L.int32))


@kcase("choose_from_datasets_test.py::testErrors[negative]")
def choose_negative(L, tmp):
    return L.Dataset.choose_from_datasets([L.Dataset.range(3)], L.Dataset.from_tensor_slices(np.int64([0, -1])))


@kcase("choose_from_datasets_test.py::testErrors[out-of-range-later]")
def choose_out_of_range_later(L, tmp):
    choices = L.Dataset.from_tensor_slices(np.int64([0, 1, 5, 1]))
    return L.Dataset.choose_from_datasets([L.Dataset.range(2), L.Dataset.range(10, 12)], choices)


@kcase("choose_from_datasets_test.py::testErrors[incompatible]")
def choose_incompatible(L, tmp):
    datasets = [L.Dataset.range(3), L.Dataset.from_tensors(b"a")]
    return L.Dataset.choose_from_datasets(datasets, L.Dataset.range(2))


@kcase("choose_from_datasets_test.py::testChooseFromDatasets[all-dry]")
def choose_all_inputs_dry(L, tmp):
    # every input ran dry: the result ends before reading the bad index 5
    choices = L.Dataset.from_tensor_slices(np.int64([0, 0, 5]))
    return L.Dataset.choose_from_datasets([L.Dataset.range(1)], choices, stop_on_empty_dataset=False)


@kcase("choose_from_datasets_test.py::ChooseFromDatasetsCheckpointTest")
def choose_shuffled_indices(L, tmp):
    indices = np.repeat(np.arange(5, dtype=np.int64), 20)
    np.random.RandomState(12).shuffle(indices)
    datasets = [L.Dataset.range(20) for _ in range(5)]
    return L.Dataset.choose_from_datasets(datasets, L.Dataset.from_tensor_slices(indices))


@kcase("choose_from_datasets_test.py::testChooseFromDatasets[cardinality]", params={
    "finite-choices-infinite-inputs": (False, True), "infinite-choices": (True, False)})  # fmt: skip
def choose_cardinality(L, tmp, param):
    choices_repeat, inputs_repeat = param
    choices = L.Dataset.range(2).repeat() if choices_repeat else L.Dataset.range(2)
    inputs = [L.Dataset.range(3), L.Dataset.range(10, 13)]
    return L.Dataset.choose_from_datasets([d.repeat() for d in inputs] if inputs_repeat else inputs, choices)


@kcase("choose_from_datasets_test.py::testChooseFromDatasets[shapes]")
def choose_merges_shapes(L, tmp):
    datasets = [L.Dataset.from_tensors([1, 2]), L.Dataset.from_tensors([3, 4, 5]), L.Dataset.from_tensors([[6]])]
    return L.Dataset.choose_from_datasets(datasets, L.Dataset.range(3))


# ---------------------------------------------------------------------------- directed_interleave_dataset_test.py


@kcase("directed_interleave_dataset_test.py::testBasic")
def directed_interleave_basic(L, tmp):
    selector = L.Dataset.range(10).repeat(100)
    inputs = [L.Dataset.from_tensors(np.int64(i)).repeat(100) for i in range(10)]
    return L.Dataset.choose_from_datasets(inputs, selector)


@kcase("directed_interleave_dataset_test.py::testErrors[same-type]")
def directed_interleave_dtypes(L, tmp):
    return L.Dataset.sample_from_datasets([L.Dataset.range(3), L.Dataset.range(3).map(lambda x: L.cast(x, L.int32))])


@kcase("directed_interleave_dataset_test.py::testSampleFromDatasets[weights-dataset-zeros]")
def directed_interleave_zero_weights(L, tmp):
    weights = L.Dataset.from_tensors(np.asarray([0.0, 0.0])).repeat(3)
    return L.Dataset.sample_from_datasets([L.Dataset.range(3), L.Dataset.range(10, 13)], weights=weights)


@kcase("directed_interleave_dataset_test.py::testSampleFromDatasets[weights-dataset-ends]", ordered=False)
def directed_interleave_weights_end(L, tmp):
    weights = L.Dataset.from_tensors(np.asarray([0.5, 0.5])).repeat(4)
    datasets = [L.Dataset.from_tensors(np.int64(7)).repeat(), L.Dataset.from_tensors(np.int64(7)).repeat()]
    return L.Dataset.sample_from_datasets(datasets, weights=weights, seed=3)


@kcase("directed_interleave_dataset_test.py::testSampleFromDatasets[weights-dataset-int]")
def directed_interleave_int_weights_dataset(L, tmp):
    weights = L.Dataset.from_tensors(np.asarray([1, 1], np.int32)).repeat()
    return L.Dataset.sample_from_datasets([L.Dataset.range(3), L.Dataset.range(10, 13)], weights=weights)


# ------------------------------------------------------------------------------------ rejection_resample_test.py


def labelled_classes(L):
    classes = np.random.RandomState(11).randint(5, size=10000).astype(np.int64)
    ds = L.Dataset.from_tensor_slices(classes).shuffle(200, seed=21)
    if L.name == "tf":
        return ds.map(lambda c: (c, L.tf.strings.as_string(c))).repeat()
    return ds.map(lambda c: (c, str(int(c)).encode())).repeat()


@kcase("rejection_resample_test.py::testDistribution", params={"known": True, "estimated": False})
def resample_distribution(L, tmp, initial_known):
    target = [0.9, 0.05, 0.05, 0.0, 0.0]
    ds = (
        labelled_classes(L)
        .rejection_resample(
            target_dist=target, initial_dist=[0.2] * 5 if initial_known else None, class_func=lambda c, _: c, seed=22
        )
        .take(2000)
    )

    def check():
        returned = items(L, ds)
        consistent = all(str(int(c)).encode() == data for c, (_, data) in returned)
        counts = np.bincount([int(c) for c, _ in returned], minlength=5)
        return consistent and bool(np.allclose(target, counts / len(returned), atol=1e-2))

    return check


INIT_DATA = np.random.RandomState(4).choice(2, 100, p=[0.5, 0.5])


@kcase(
    "rejection_resample_test.py::testEdgeCasesSampleFromInitialDataset",
    params={"only-initial": True, "filtered": False},
)
def resample_edge_cases(L, tmp, only_initial_dist):
    # target == initial: the input itself; target [0, 1]: class 1 always accepted, class 0 never (no randomness)
    target = [0.5, 0.5] if only_initial_dist else [0.0, 1.0]
    ds = L.Dataset.from_tensor_slices(INIT_DATA)
    return ds.rejection_resample(class_func=lambda x: x, target_dist=target, initial_dist=[0.5, 0.5])


@kcase("rejection_resample_test.py::testRandomClasses")
def resample_random_classes(L, tmp):
    target = [0.0, 0.0, 0.0, 1.0]
    ds = L.Dataset.from_tensor_slices(np.random.RandomState(5).choice(4, 100))
    if L.name == "tf":
        ds = ds.map(lambda _: L.cast(L.tf.random.uniform([1], seed=9) * 4, L.int32)[0])
    else:
        rng = np.random.default_rng(9)
        ds = ds.map(lambda _: np.int32(rng.random() * 4))
    ds = ds.rejection_resample(class_func=lambda x: x, target_dist=target, initial_dist=[0.25] * 4)

    def check():
        classes = [int(c) for c, _ in items(L, ds)]
        return bool(np.allclose(target, np.bincount(classes, minlength=4) / len(classes), atol=1e-2))

    return check


@kcase("rejection_resample_test.py::testExhaustion")
def resample_exhaustion(L, tmp):
    target = [0.9, 0.1]
    ds = L.Dataset.range(10000).rejection_resample(
        class_func=lambda x: x % 2, target_dist=target, initial_dist=[0.5, 0.5], seed=3
    )

    def check():
        classes = [int(c) for c, _ in items(L, ds)]
        return len(classes) < 10000 and bool(np.allclose(target, np.bincount(classes) / len(classes), atol=1e-2))

    return check


OTHER_DTYPES = {"f32-f64": ("float32", "float64"), "f64-f32": ("float64", "float32"), "f64-f64": ("float64", "float64")}


@kcase("rejection_resample_test.py::testOtherDtypes", params=OTHER_DTYPES)
def resample_other_dtypes(L, tmp, dtypes):
    target = np.array([0.5, 0.5], dtype=dtypes[0])
    initial = np.array([0.5, 0.5], dtype=dtypes[1])
    return L.Dataset.range(10).rejection_resample(class_func=lambda x: x % 2, target_dist=target, initial_dist=initial)


@kcase("rejection_resample_test.py::testOtherDtypes[f64-estimated]")
def resample_other_dtypes_estimated(L, tmp):
    target = np.array([0.5, 0.5], dtype="float64")
    ds = L.Dataset.range(10).rejection_resample(class_func=lambda x: x % 2, target_dist=target, seed=2)
    return lambda: all(int(c) == int(x) % 2 for c, x in items(L, ds)) and len(items(L, ds)) <= 10


@kcase("rejection_resample_test.py::testExhaustion[class-out-of-range]")
def resample_class_out_of_range(L, tmp):
    # classes 0, 1, 2 with 2 classes: 0 is dropped, 1 kept, then class 2 fails
    return L.Dataset.range(6).rejection_resample(lambda x: x % 3, [0.0, 1.0], [0.5, 0.5])


@kcase("rejection_resample_test.py::testOtherDtypes[shape-mismatch]")
def resample_shape_mismatch(L, tmp):
    return L.Dataset.range(6).rejection_resample(lambda x: x % 3, [0.0, 1.0], [0.5, 0.25, 0.25])


RESAMPLE_CARDINALITY = {
    "plain": ([0.5, 0.5], [0.5, 0.5], False),
    "mixed": ([0.3, 0.7], [0.5, 0.5], False),
    "estimated": ([0.3, 0.7], None, False),
    "estimated-infinite": ([0.3, 0.7], None, True),
    "filtered-infinite": ([0.0, 1.0], [0.5, 0.5], True),
}


@kcase("rejection_resample_test.py::testExhaustion[cardinality]", params=RESAMPLE_CARDINALITY)
def resample_cardinality(L, tmp, param):
    target, initial, infinite = param
    ds = L.Dataset.range(10).repeat() if infinite else L.Dataset.range(10)
    return described(ds.rejection_resample(lambda x: x % 2, target, initial, seed=1))


@kcase("rejection_resample_test.py::testEdgeCasesSampleFromInitialDataset[tuples]")
def resample_tuple_elements(L, tmp):
    ds = L.Dataset.range(6).map(lambda x: (x, 2 * x))
    return ds.rejection_resample(lambda x, y: x % 2, [0.5, 0.5], [0.5, 0.5])

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import ElementTypeError, InvalidArgumentError
from parafeed.ops.resample import ClassDistributionDataset

D = pf.Dataset
CLASSES = np.repeat(np.int64([0, 1, 2]), [12000, 6000, 2000])  # exactly [0.6, 0.3, 0.1], shuffled
np.random.RandomState(0).shuffle(CLASSES)


def class_shares(ds, n=3):
    classes = [int(c) for c, _ in ds]
    return np.bincount(classes, minlength=n) / len(classes), len(classes)


@pytest.mark.parametrize("initial", [[0.6, 0.3, 0.1], None], ids=["known", "estimated"])
def test_classes_converge_to_the_target(initial):
    ds = D.from_tensor_slices(CLASSES).rejection_resample(lambda c: c, [0.2, 0.3, 0.5], initial, seed=5)
    shares, n = class_shares(ds)
    assert n > 3000 and np.allclose(shares, [0.2, 0.3, 0.5], atol=0.02)


def test_pairs_keep_the_element_and_a_seed_fixes_them():
    ds = D.range(2000).map(lambda x: (x, x * 10)).rejection_resample(lambda x, y: x % 2, [0.8, 0.2], seed=1)
    pairs = list(ds)
    assert all(int(c) == int(x) % 2 and int(y) == 10 * int(x) for c, (x, y) in pairs)
    assert ds.element_spec == (pf.TensorSpec((), np.int64), (pf.TensorSpec((), np.int64), pf.TensorSpec((), np.int64)))
    again = list(D.range(2000).map(lambda x: (x, x * 10)).rejection_resample(lambda x, y: x % 2, [0.8, 0.2], seed=1))
    assert [(int(c), int(x)) for c, (x, _) in again] == [(int(c), int(x)) for c, (x, _) in pairs]


def test_elements_can_come_twice_from_the_second_pass():
    # 20% plain pass, 80% filtered (evens only): more evens than the input has would need repeats
    ds = D.range(1000).rejection_resample(lambda x: x % 2, [0.9, 0.1], [0.5, 0.5], seed=2)
    values = [int(x) for _, x in ds]
    assert len(values) > len(set(values))


def test_target_equal_to_initial_is_the_input_itself():
    ds = D.range(6).rejection_resample(lambda x: x % 2, [0.5, 0.5], [0.5, 0.5])
    assert [(int(c), int(x)) for c, x in ds] == [(x % 2, x) for x in range(6)] and ds.cardinality() == 6


def test_dirac_target_keeps_one_class_only():
    ds = D.range(10).rejection_resample(lambda x: x % 2, [0.0, 1.0], [0.5, 0.5])
    assert [(int(c), int(x)) for c, x in ds] == [(1, x) for x in range(1, 10, 2)]
    assert ds.cardinality() == pf.UNKNOWN


def test_estimate_uses_groups_of_32_with_smoothing():
    classes = D.from_tensor_slices(np.int64([0] * 32 + [1] * 40))
    dists = [d.tolist() for d in ClassDistributionDataset(classes, 2)]
    assert len(dists) == 72
    assert dists[0] == dists[31] == pytest.approx([42 / 52, 10 / 52])
    assert dists[32] == dists[63] == pytest.approx([42 / 84, 42 / 84])
    assert dists[64] == dists[71] == pytest.approx([42 / 92, 50 / 92])
    assert pf.checkpoint.check_restores(ClassDistributionDataset(classes, 2)) > 0


def test_errors():
    with pytest.raises(InvalidArgumentError, match="not in \\[0, 2\\)"):
        list(D.range(6).rejection_resample(lambda x: x % 3, [0.0, 1.0], [0.5, 0.5]))
    with pytest.raises(ElementTypeError, match="integer scalar"):
        list(D.range(6).rejection_resample(lambda x: np.float32(x % 2), [0.0, 1.0], [0.5, 0.5]))
    with pytest.raises(InvalidArgumentError, match="Incompatible shapes"):
        D.range(6).rejection_resample(lambda x: x % 2, [0.5, 0.5], [0.2, 0.3, 0.5])
    with pytest.raises(InvalidArgumentError, match="1-D"):
        D.range(6).rejection_resample(lambda x: x % 2, [[0.5, 0.5]])


@pytest.mark.parametrize("initial", [[0.6, 0.3, 0.1], None], ids=["known", "estimated"])
def test_resumes_exactly(initial):
    ds = D.from_tensor_slices(CLASSES[:400]).rejection_resample(lambda c: c, [0.2, 0.3, 0.5], initial, seed=3)
    assert pf.checkpoint.check_restores(ds, stops=[0, 1, 17, 33, 64, 100]) > 0


def test_experimental_apply():
    ds = D.range(6).apply(pf.experimental.rejection_resample(lambda x: x % 2, [0.5, 0.5], [0.5, 0.5]))
    assert [int(x) for _, x in ds] == list(range(6))

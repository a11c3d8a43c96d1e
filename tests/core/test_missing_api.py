"""Every public name of tf.data (Dataset methods, tf.data, tf.data.experimental) exists in parafeed, or fails with a
message that names what to use instead; Keras, given a pf.Dataset, says to pass ``ds.to_tf()``."""

from __future__ import annotations

import numpy as np
import pytest

import parafeed as pf
from parafeed.core.missing import DATASET, EXPERIMENTAL, TOP
from parafeed.values import structure

tf = pytest.importorskip("tensorflow", reason="the comparison needs TensorFlow (make test installs it)")


def _public(obj) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _absent_or_explained(owner, name: str, table: dict) -> str | None:
    try:
        getattr(owner, name)
    except AttributeError as error:
        if name not in table or "parafeed does not have" not in str(error) or table[name] not in str(error):
            return f"{name}: {error}"
    return None


@pytest.mark.parametrize(
    ("tf_owner", "pf_owner", "table"),
    [
        (lambda: tf.data.Dataset, lambda: pf.Dataset.range(1), DATASET),
        (lambda: tf.data, lambda: pf, TOP),
        (lambda: tf.data.experimental, lambda: pf.experimental, EXPERIMENTAL),
    ],
    ids=["Dataset", "tf.data", "experimental"],
)
def test_every_tf_data_name_exists_or_names_its_alternative(tf_owner, pf_owner, table):
    problems = [p for name in _public(tf_owner()) if (p := _absent_or_explained(pf_owner(), name, table))]
    assert problems == []


def test_names_parafeed_has_are_not_listed_as_missing():
    for owner, table in ((pf.Dataset.range(1), DATASET), (pf, TOP), (pf.experimental, EXPERIMENTAL)):
        for name in table:
            with pytest.raises(AttributeError, match="parafeed does not have"):
                getattr(owner, name)


def test_an_unknown_name_gets_pythons_usual_error():
    with pytest.raises(AttributeError, match="'RangeDataset' has no attribute 'mapp'"):
        pf.Dataset.range(1).mapp  # noqa: B018


def test_keras_given_a_pf_dataset_says_to_pass_to_tf():
    keras = pytest.importorskip("keras")
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(loss="mse")
    ds = pf.Dataset.from_tensor_slices((np.ones((4, 2), np.float32), np.ones((4, 1), np.float32))).batch(2)
    with pytest.raises(ValueError, match=r"ds\.to_tf\(\)"):
        model.fit(ds, epochs=1, verbose=0)
    history = model.fit(ds.to_tf(), epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1


def test_iterator_get_next_and_optional_as_tf_data():
    it = iter(pf.Dataset.range(2))
    assert it.get_next() == 0
    first, end = it.get_next_as_optional(), it.get_next_as_optional()
    assert first.has_value() and first.get_value() == 1 and not end.has_value()
    assert end.element_spec == pf.TensorSpec((), np.int64) == it.element_spec
    with pytest.raises(pf.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    with pytest.raises(pf.errors.InvalidArgumentError, match="does not have a value"):
        end.get_value()
    assert pf.experimental.get_next_as_optional(iter(pf.Dataset.range(1))).get_value() == 0


def test_tf_dtype_names_port_by_renaming():
    spec = pf.TensorSpec((None,), pf.int64)
    assert spec.dtype == np.int64 and pf.TensorSpec((), pf.string).dtype == structure.STRING
    feature = pf.io.FixedLenFeature([], pf.float32)
    assert np.dtype(feature.dtype) == np.float32

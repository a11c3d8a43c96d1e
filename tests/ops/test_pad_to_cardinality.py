import numpy as np
import pytest

import parafeed as pf


def test_pads_dict_elements_with_zeros_marked_invalid():
    data = {"a": [1, 2], "b": ([b"x", b"y"], [[1.5, 2.5], [3.5, 4.5]])}
    ds = pf.Dataset.from_tensor_slices(data).apply(pf.experimental.pad_to_cardinality(4))
    out = list(ds)
    assert ds.cardinality() == 4 and len(out) == 4
    assert [bool(e["valid"]) for e in out] == [True, True, False, False]
    assert int(out[1]["a"]) == 2 and out[1]["b"][0] == b"y"
    pad = out[3]
    assert int(pad["a"]) == 0 and pad["b"][0] == b"" and pad["b"][1].tolist() == [0.0, 0.0]
    assert pad["b"][1].dtype == np.float32 and list(pad) == ["a", "b", "valid"]


def test_mask_key_and_refused_inputs():
    ds = pf.Dataset.from_tensor_slices({"x": [1]}).apply(pf.experimental.pad_to_cardinality(2, mask_key="real"))
    assert [bool(e["real"]) for e in ds] == [True, False]
    with pytest.raises(ValueError, match="known cardinalty, but has cardinality -2"):
        pf.Dataset.from_tensors({"a": 1}).filter(lambda x: True).apply(pf.experimental.pad_to_cardinality(5))
    with pytest.raises(ValueError, match=r"less than the target cardinality \(3\), but has cardinality 5"):
        pf.Dataset.from_tensors({"a": 1}).repeat(5).apply(pf.experimental.pad_to_cardinality(3))
    with pytest.raises(ValueError, match="to be a dictionary"):
        pf.Dataset.from_tensors(1).apply(pf.experimental.pad_to_cardinality(5))

"""The two libraries a differential pipeline is built with: tf.data and parafeed, behind one small namespace.

A pipeline is written once as ``build(L)``; ``L.Dataset``, ``L.TensorSpec`` and the few array helpers below are
tf.data + tf ops for TensorFlow and parafeed + NumPy for parafeed. Plain Python arithmetic and indexing work on both.
"""

from __future__ import annotations

import collections
from types import SimpleNamespace

import numpy as np

Point = collections.namedtuple("Point", ["x", "y"])


def tf_lib() -> SimpleNamespace:
    import tensorflow as tf

    return SimpleNamespace(
        name="tf",
        tf=tf,
        Dataset=tf.data.Dataset,
        experimental=tf.data.experimental,
        TensorSpec=tf.TensorSpec,
        AUTOTUNE=tf.data.AUTOTUNE,
        bool=tf.bool,
        int8=tf.int8,
        int16=tf.int16,
        uint8=tf.uint8,
        uint16=tf.uint16,
        int32=tf.int32,
        int64=tf.int64,
        float32=tf.float32,
        float64=tf.float64,
        string=tf.string,
        fill=lambda n, value: tf.fill([n], value),
        length=lambda x: tf.shape(x)[0],
        cast=lambda x, dtype: tf.cast(x, dtype),
        reduce_sum=lambda x: tf.reduce_sum(x),
        equal=lambda a, b: tf.equal(a, b),
        logical_and=tf.logical_and,
        stack=lambda xs: tf.stack(xs),
        str_len=lambda s: tf.strings.length(s, unit="BYTE"),
        concat=lambda xs: tf.concat(xs, axis=0),
        reverse=lambda x: tf.reverse(x, axis=[0]),
        check_numerics=lambda x: tf.debugging.check_numerics(x, "check_numerics"),
        to_numpy=lambda value: tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, value),
    )


def pf_lib() -> SimpleNamespace:
    import parafeed as pf

    return SimpleNamespace(
        name="pf",
        pf=pf,
        Dataset=pf.Dataset,
        experimental=getattr(pf, "experimental", None),
        TensorSpec=pf.TensorSpec,
        AUTOTUNE=pf.AUTOTUNE,
        bool=np.bool_,
        int8=np.int8,
        int16=np.int16,
        uint8=np.uint8,
        uint16=np.uint16,
        int32=np.int32,
        int64=np.int64,
        float32=np.float32,
        float64=np.float64,
        string="string",
        fill=lambda n, value: np.full(int(n), value),
        length=lambda x: np.int32(len(x)),
        cast=lambda x, dtype: np.asarray(x).astype(dtype)[()],
        reduce_sum=lambda x: np.sum(x),
        equal=lambda a, b: np.equal(a, b),
        logical_and=np.logical_and,
        stack=lambda xs: np.stack(xs),
        str_len=lambda s: np.int32(len(s)),
        concat=lambda xs: np.concatenate(xs),
        reverse=lambda x: x[::-1],
        check_numerics=_check_numerics,
        to_numpy=lambda value: pf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, value),
    )


def _check_numerics(x):
    import parafeed as pf

    if not np.all(np.isfinite(x)):
        raise pf.errors.InvalidArgumentError(f"check_numerics: found Inf or NaN in {x!r}")
    return x

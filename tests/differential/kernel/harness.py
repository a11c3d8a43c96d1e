"""Cases ported from tf.data's own kernel tests, each run through TensorFlow and parafeed and compared.

A case is ``build(L, tmp)`` (``L`` from ``tests/differential/libs.py``) returning a dataset, or returning a function
of no arguments that returns a value (for ``reduce``, ``get_single_element`` and the like). Both libraries run it;
what is compared is the *outcome*:

- where it failed: while building (``build``), while iterating (``iterate``), or not at all;
- the error's kind (TensorFlow's error class; parafeed's errors are ValueErrors/TypeErrors with the same names);
- the elements produced before the end or the error (exactly: structure, leaf type, dtype, shape, value);
- ``cardinality()`` and the element spec's structure and dtypes.

A case with ``differs="anchor"`` is a difference documented in ``docs/porting.md`` under ``{#anchor}``: the test
checks that the anchor exists *and* that the outcomes still differ, so a fixed difference gets its case back.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parafeed.values import structure
from tests.helpers import describe

PORTING = Path(__file__).resolve().parents[3] / "docs" / "porting.md"


@dataclass(frozen=True)
class KernelCase:
    name: str
    source: str  # the kernel test it is ported from: "batch_test.py::testBasic"
    build: Callable[[Any, str], Any]
    ordered: bool = True
    differs: str | None = None
    take: int | None = None  # compare only the first `take` elements (infinite datasets)
    spec: bool = True  # compare element specs


REGISTRY: list[KernelCase] = []


def kcase(source: str, *, ordered: bool = True, differs: str | None = None, take: int | None = None,
          spec: bool = True, params: dict[str, Any] | None = None) -> Callable:  # fmt: skip
    """Register ``build(L, tmp[, param])`` as a case (one per entry of ``params``, named ``fn[key]``)."""

    def register(fn: Callable) -> Callable:
        if params is None:
            REGISTRY.append(KernelCase(fn.__name__, source, fn, ordered, differs, take, spec))
        else:
            for key, value in params.items():
                REGISTRY.append(
                    KernelCase(f"{fn.__name__}[{key}]", source, _bind(fn, value), ordered, differs, take, spec)
                )
        return fn

    return register


def _bind(fn: Callable, value: Any) -> Callable:
    return lambda L, tmp: fn(L, tmp, value)


@dataclass
class Outcome:
    failed_at: str | None = None  # "build", "iterate" or None
    error: tuple[str, ...] = ()  # the names the error answers to
    message: str = ""
    elements: list = field(default_factory=list)
    cardinality: int | None = None
    spec: Any = None
    in_library: bool = True  # whether the error came out of the library, not out of the case's own code

    def summary(self) -> str:
        phase = {"build": "building", "iterate": "iterating"}.get(self.failed_at or "")
        head = f"failed while {phase}: {self.error[0]}: {self.message[:300]}" if self.failed_at else "ok"
        return f"{head}; {len(self.elements)} element(s); cardinality {self.cardinality}"


def _failed(out: Outcome, phase: str, error: BaseException) -> Outcome:
    out.failed_at, out.error, out.message = phase, _error_names(error), str(error)
    frames = traceback.extract_tb(error.__traceback__)
    out.in_library = any(f"/{lib}/" in frame.filename for frame in frames for lib in ("tensorflow", "parafeed"))
    return out


def _error_names(error: BaseException) -> tuple[str, ...]:
    names = [type(error).__name__]
    names += [c.__name__ for c in type(error).__mro__[1:] if c.__module__ in ("builtins",) and c is not Exception]
    names += [c.__name__ for c in type(error).__mro__[1:] if "errors" in c.__module__]
    return tuple(dict.fromkeys(names))


def run(case: KernelCase, L: Any, tmp: str) -> Outcome:
    out = Outcome()
    try:
        ds = case.build(L, tmp)
        if not hasattr(ds, "element_spec") and callable(ds):
            ds = ds()  # a value-returning case (reduce, get_single_element, ...)
            out.elements = [L.to_numpy(ds)]
            return out
        out.cardinality = int(ds.cardinality())
        out.spec = ds.element_spec
    except Exception as error:
        return _failed(out, "build", error)
    try:  # making the iterator is part of iterating: tf.data raises some errors there
        for element in _tf_elements(ds, L.tf) if L.name == "tf" else ds:
            out.elements.append(element)
            if case.take is not None and len(out.elements) >= case.take:
                break
    except Exception as error:
        _failed(out, "iterate", error)
    return out


def _tf_elements(ds: Any, tf: Any) -> Any:
    """TensorFlow's elements as ``as_numpy_iterator`` gives them, but for ragged leaves: ``as_numpy_iterator`` turns
    those into object arrays of rows, which lose the row splits; here they become ``RaggedTensorValue``s."""
    if not any(isinstance(s, tf.RaggedTensorSpec) for s in tf.nest.flatten(ds.element_spec)):
        return iter(ds.as_numpy_iterator())

    def to_numpy(x: Any) -> Any:
        if isinstance(x, tf.RaggedTensor):
            return tf.compat.v1.ragged.RaggedTensorValue(to_numpy(x.values), x.row_splits.numpy())
        if isinstance(x, tf.SparseTensor):
            return tf.compat.v1.SparseTensorValue(x.indices.numpy(), x.values.numpy(), x.dense_shape.numpy())
        return x.numpy()

    return (tf.nest.map_structure(to_numpy, element) for element in ds)


def describe_any(element: Any) -> Any:
    """``tests.helpers.describe``, extended to sparse and ragged leaves as both libraries give them."""
    kind = type(element).__name__
    if kind in ("SparseTensor", "SparseTensorValue"):
        return ("sparse", describe_any(np.asarray(element.indices)), describe_any(np.asarray(element.values)),
                describe_any(np.asarray(element.dense_shape)))  # fmt: skip
    if kind in ("RaggedTensor", "RaggedTensorValue"):
        return ("ragged", describe_any(element.flat_values if hasattr(element, "flat_values") else element.values),
                tuple(describe_any(np.asarray(s)) for s in _row_splits(element)))  # fmt: skip
    if isinstance(element, dict):
        return ("dict", tuple((k, describe_any(v)) for k, v in element.items()))
    if isinstance(element, tuple):
        name = type(element).__name__ if hasattr(type(element), "_fields") else "tuple"
        return (name, tuple(describe_any(v) for v in element))
    if isinstance(element, list):
        return ("list", tuple(describe_any(v) for v in element))
    if isinstance(element, (bool, int, float)) and not isinstance(element, np.generic):
        return ("python", type(element).__name__, element)
    return describe(element)


def _row_splits(element: Any) -> list:
    splits = []
    while type(element).__name__ in ("RaggedTensor", "RaggedTensorValue"):
        splits.append(element.row_splits)
        element = element.values
    return splits


def _sorted(elements: list) -> list:
    return sorted(elements, key=lambda e: repr(describe_any(e)))


def mismatch(case: KernelCase, expected: Outcome, actual: Outcome, tf: Any, pf: Any) -> str | None:
    """Why parafeed's outcome differs from TensorFlow's, or None when they agree."""
    for lib, outcome in (("TensorFlow", expected), ("parafeed", actual)):
        if outcome.failed_at and not outcome.in_library:
            return f"the case's own code failed under {lib}, not the library: {outcome.summary()}"
    if expected.failed_at != actual.failed_at:
        return f"TensorFlow: {expected.summary()}\nparafeed:   {actual.summary()}"
    if expected.failed_at and expected.error[0] not in actual.error:
        return f"error kind differs: TensorFlow {expected.error[0]}, parafeed {actual.error} ({actual.message[:300]})"
    want, got = expected.elements, actual.elements
    if not case.ordered:
        want, got = _sorted(want), _sorted(got)
    if len(want) != len(got):
        return f"{len(got)} element(s), TensorFlow gives {len(want)}:\n  TensorFlow {want!r:.600}\n  parafeed   {got!r:.600}"
    for i, (w, g) in enumerate(zip(want, got)):
        if describe_any(w) != describe_any(g):
            return f"element {i} differs:\n  TensorFlow {w!r:.600}\n  parafeed   {g!r:.600}"
    if expected.cardinality != actual.cardinality:
        return f"cardinality differs: TensorFlow {expected.cardinality}, parafeed {actual.cardinality}"
    if case.spec and expected.spec is not None:
        return _spec_mismatch(expected.spec, actual.spec, tf, pf)
    return None


def _spec_mismatch(tf_spec: Any, pf_spec: Any, tf: Any, pf: Any) -> str | None:
    tf_leaves = tf.nest.flatten(tf_spec, expand_composites=False)
    pf_leaves = structure.flatten(pf_spec)
    if len(tf_leaves) != len(pf_leaves):
        return f"element_spec structure differs: {tf_spec} vs {pf_spec}"
    for t, p in zip(tf_leaves, pf_leaves):
        t_dtype = getattr(t, "dtype", None)
        if t_dtype is not None and hasattr(p, "dtype") and structure.dtype_name(p.dtype) != t_dtype.name:
            return f"element_spec dtype differs: {t} vs {p}"
    return None


def documented(anchor: str) -> bool:
    return PORTING.exists() and re.search(r"\{#" + re.escape(anchor) + r"\}", PORTING.read_text()) is not None

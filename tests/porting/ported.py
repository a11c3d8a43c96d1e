"""The porting corpus run both ways: each entry under TensorFlow, and its source renamed for parafeed
(``tf.data.experimental.`` -> ``pf.experimental.``, ``tf.data.`` -> ``pf.``, ``tf.`` -> ``pf.``, ``import tensorflow
as tf`` -> ``import parafeed as pf``, ``from tensorflow import`` -> ``from parafeed import``) on the same files, written by TensorFlow. Deterministic entries that draw no
random numbers must give the same elements (values, dtypes, shapes); the others (random draws, shuffles: parafeed's
numbers are its own) the same number of elements with the same dtypes and ranks.

    python -m tests.porting.ported                  # every entry: a table of outcomes
    python -m tests.porting.ported docs_tfrecord    # one entry, with the error in full
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
import tempfile
import traceback
import types
from typing import Any

import numpy as np

from tests.porting import data

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
MAX_ELEMENTS = 1000
FLOAT_TOLERANCE = 1e-5  # (relative, for float elements: image resizing is exact only to TensorFlow's float rounding)


def slugs() -> list[str]:
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(CORPUS, "*.py")))


def rename(source: str) -> str:
    """The porting guide's rename, applied to a whole module's source."""
    source = re.sub(r"\bimport tensorflow as tf\b", "import parafeed as pf", source)
    source = re.sub(r"\bfrom tensorflow import\b", "from parafeed import", source)
    source = re.sub(r"\btf\.data\.experimental\.", "pf.experimental.", source)
    source = re.sub(r"\btf\.data\.", "pf.", source)
    source = re.sub(r"\btf\.", "pf.", source)
    return re.sub(r"\bbuild\(tf,", "build(pf,", source)


def load(slug: str, ported: bool) -> types.ModuleType:
    path = os.path.join(CORPUS, slug + ".py")
    with open(path) as f:
        source = f.read()
    name = f"porting_{'pf' if ported else 'tf'}_{slug}"
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module  # (AutoGraph looks functions' modules up in sys.modules)
    exec(compile(rename(source) if ported else source, path, "exec"), module.__dict__)
    return module


def elements(slug: str, ported: bool, directory: str) -> tuple[list[Any], bool]:
    """The entry's elements as NumPy (leaves flattened), and whether the pipeline draws random numbers (parafeed's
    pipelines: a step with a seed, such as a shuffle or a map calling random operations)."""
    module = load(slug, ported)
    cwd = os.getcwd()
    try:
        if ported:
            import parafeed as framework
        else:
            import tensorflow as framework
        dataset = module.build(framework, directory)
        if ported and not isinstance(dataset, framework.Dataset):  # (`from tensorflow import image`: not renamed)
            raise RuntimeError(f"the renamed code still builds a {type(dataset).__name__}, not a parafeed dataset")
        got = []
        for element in dataset:
            got.append([_numpy(leaf) for leaf in _leaves(element)])
            if len(got) > MAX_ELEMENTS:
                raise RuntimeError(f"more than {MAX_ELEMENTS} elements")
        if not ported:
            return got, False
        from parafeed.core import graph

        return got, bool(graph.find(dataset, lambda node: getattr(node, "seed", None) is not None))
    finally:
        os.chdir(cwd)


def _leaves(element: Any) -> list[Any]:
    if isinstance(element, dict):
        return [leaf for key in sorted(element) for leaf in _leaves(element[key])]
    if isinstance(element, (tuple, list)):
        return [leaf for item in element for leaf in _leaves(item)]
    return [element]


def _numpy(leaf: Any) -> Any:
    if hasattr(leaf, "to_list") and hasattr(leaf, "flat_values"):  # ragged
        return ("ragged", np.asarray(leaf.flat_values.numpy() if hasattr(leaf.flat_values, "numpy") else
                                     leaf.flat_values))  # fmt: skip
    if hasattr(leaf, "dense_shape"):  # sparse
        return ("sparse", *(np.asarray(getattr(leaf, a)) for a in ("indices", "values", "dense_shape")))
    return np.asarray(leaf.numpy() if hasattr(leaf, "numpy") else leaf)


def compare(want: list[Any], got: list[Any], exact: bool) -> str | None:
    """None when ``got`` matches ``want``, else what differs first."""
    if len(got) != len(want):
        return f"{len(got)} elements, TensorFlow gives {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        if len(w) != len(g):
            return f"element {i}: {len(g)} components, TensorFlow's has {len(w)}"
        for j, (a, b) in enumerate(zip(w, g)):
            problem = _leaf_difference(a, b, exact)
            if problem:
                return f"element {i}, component {j}: {problem}"
    return None


def _leaf_difference(want: Any, got: Any, exact: bool) -> str | None:
    if isinstance(want, tuple) or isinstance(got, tuple):
        if not (isinstance(want, tuple) and isinstance(got, tuple) and want[0] == got[0]):
            return f"{_kind(got)} where TensorFlow gives {_kind(want)}"
        return next((d for a, b in zip(want[1:], got[1:]) if (d := _leaf_difference(a, b, exact))), None)
    if want.dtype != got.dtype and not (want.dtype.kind in "OSU" and got.dtype.kind in "OSU"):
        return f"dtype {got.dtype}, TensorFlow's {want.dtype}"
    if want.ndim != got.ndim or (exact and want.shape != got.shape):
        return f"shape {got.shape}, TensorFlow's {want.shape}"
    if not exact:
        return None
    if want.dtype.kind == "f":
        if not np.allclose(want, got, rtol=FLOAT_TOLERANCE, atol=FLOAT_TOLERANCE, equal_nan=True):
            return f"values differ by up to {np.nanmax(np.abs(want.astype(float) - got.astype(float)))}"
        return None
    if not np.array_equal(want, got):
        return f"values differ: {got.reshape(-1)[:6]!s} vs TensorFlow's {want.reshape(-1)[:6]!s}"
    return None


def _kind(leaf: Any) -> str:
    return leaf[0] if isinstance(leaf, tuple) else "dense"


def run(slug: str) -> tuple[str, str]:
    """``(outcome, detail)``: outcome "same", "differs" or "fails" (parafeed raises)."""
    directory = tempfile.mkdtemp(prefix=f"ported_{slug}_")
    try:
        module = load(slug, ported=False)
        data.write(module.DATA, directory)
        want, _ = elements(slug, False, directory)
        try:
            got, random = elements(slug, True, directory)
        except Exception as error:  # (the outcome to report)
            return "fails", f"{type(error).__name__}: {error}".splitlines()[0][:300] + "\n" + traceback.format_exc(
                limit=-4)  # fmt: skip
        same = module.DETERMINISTIC and not random
        problem = compare(want, got, exact=same)
        if problem:
            return "differs", problem
        return ("same" if same else "same specs"), f"{len(got)} elements"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    names = argv or slugs()
    outcomes = {}
    for slug in names:
        outcome, detail = run(slug)
        outcomes[slug] = outcome
        print(f"{outcome:8} {slug}: {detail if len(names) == 1 else detail.splitlines()[0]}", flush=True)
    same = sum(o in ("same", "same specs") for o in outcomes.values())
    print(f"{same}/{len(names)} entries port by the rename ({sum(o == 'same' for o in outcomes.values())} with "
          "TensorFlow's exact elements, the others with its element counts and specs: they draw random numbers)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

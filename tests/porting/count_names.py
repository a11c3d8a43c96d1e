"""Count the TensorFlow names the porting corpus uses.

Parses every corpus module (tests/porting/corpus/*.py) with ``ast`` and looks only at the code taken from the sources:
the regions between a ``# >>> verbatim`` marker line and the next ``# <<< verbatim`` line. That is the module-level
verbatim blocks and, for notebook and script sources, the cells pasted into ``build()`` between
``# >>> verbatim cells`` and ``# <<< verbatim``; the rest of ``build()``, the stubs and the docstring are not counted.

What is counted:

* ``tf.`` names: the full dotted name of every attribute chain rooted at the module ``tf`` (``tf.cast``,
  ``tf.io.parse_single_example``, ``tf.data.experimental.AUTOTUNE``, ``tf.compat.v1.image.resize``...), counted once
  per chain (``tf.io.gfile.glob`` counts ``tf.io.gfile.glob``, not also ``tf.io``). Aliases made by
  ``from tensorflow import image as tf_image`` (or ``import tensorflow.x as y``) in the module are resolved
  (``tf_image.resize`` counts as ``tf.image.resize``).
* ``<tensor>.`` attributes and methods that map functions use on tensors and other values: ``set_shape``,
  ``get_shape``, ``as_list``, ``numpy``, ``shape``, ``dtype``, and also ``values``, ``indices``, ``dense_shape``
  (SparseTensor), ``rank``, ``ndims``, ``is_compatible_with`` (TensorShape), ``min``, ``max`` (DType) - when not
  called as a method of something else (``d.values()`` with no arguments is a dict method and is not counted).
* ``<Dataset>.`` methods: calls of tf.data.Dataset method names (``map``, ``batch``, ``interleave``...).
* ``<Options>.`` attributes: the tf.data.Options fields the sources set (``experimental_deterministic``...).
* ``<TensorArray>.`` and ``<table>.`` methods (``write``, ``stack``, ``size``, ``read``; ``lookup``).

The receiver of a method is not typed: a name is skipped when its receiver is rooted at an imported non-TensorFlow
module (``np.take``, ``functools.reduce``) or at a variable assigned from one (``rng = np.random.RandomState(...)``,
then ``rng.shuffle``); otherwise the method name decides. Python operators on tensors (``+``, ``==``, ``~``, slicing)
are not counted.

Prints a table sorted by the number of corpus modules using each name, then total uses, and writes the same to
tests/porting/corpus/NAMES.md.

    python tests/porting/count_names.py            # table + NAMES.md
    python tests/porting/count_names.py --no-write # table only
"""

from __future__ import annotations

import argparse
import ast
import collections
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

TENSOR_ATTRS = {
    "set_shape",
    "get_shape",
    "as_list",
    "numpy",
    "shape",
    "dtype",
    "values",
    "indices",
    "dense_shape",
    "rank",
    "ndims",
    "is_compatible_with",
    "min",
    "max",
}
DATASET_METHODS = {
    "apply",
    "as_numpy_iterator",
    "batch",
    "bucket_by_sequence_length",
    "cache",
    "cardinality",
    "concatenate",
    "enumerate",
    "filter",
    "flat_map",
    "group_by_window",
    "ignore_errors",
    "interleave",
    "map",
    "padded_batch",
    "prefetch",
    "ragged_batch",
    "rebatch",
    "reduce",
    "rejection_resample",
    "repeat",
    "scan",
    "shard",
    "shuffle",
    "skip",
    "snapshot",
    "take",
    "take_while",
    "unbatch",
    "unique",
    "window",
    "with_options",
}
OPTIONS_ATTRS = {
    "experimental_deterministic",
    "experimental_slack",
    "experimental_distribute",
    "auto_shard_policy",
    "experimental_threading",
    "private_threadpool_size",
    "experimental_optimization",
    "deterministic",
    "threading",
}
TENSORARRAY_METHODS = {"write", "stack", "read", "size", "unstack", "gather", "scatter"}
TABLE_METHODS = {"lookup"}


def corpus_paths() -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(CORPUS, "*.py")) if not os.path.basename(p).startswith("_"))


def verbatim_lines(text: str) -> set[int]:
    """1-based line numbers inside ``# >>> verbatim`` ... ``# <<< verbatim`` regions."""
    lines = set()
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("# >>> verbatim"):
            inside = True
            continue
        if stripped.startswith("# <<< verbatim"):
            inside = False
            continue
        if inside:
            lines.add(number)
    return lines


def tf_aliases(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to TensorFlow modules: {"tf": "tf", "tf_image": "tf.image", ...}."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "tensorflow" or alias.name.startswith("tensorflow."):
                    name = alias.asname or alias.name.split(".")[0]
                    aliases[name] = "tf" + alias.name[len("tensorflow") :]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and (node.module == "tensorflow" or node.module.startswith("tensorflow."))
        ):
            for alias in node.names:
                aliases[alias.asname or alias.name] = "tf" + node.module[len("tensorflow") :] + "." + alias.name
    aliases.setdefault("tf", "tf")
    return aliases


def other_modules(tree: ast.Module, aliases: dict[str, str]) -> set[str]:
    """Names bound to imported non-TensorFlow modules or objects (np, os, functools, partial...)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name.split(".")[0]) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update((a.asname or a.name) for a in node.names)
    return names - set(aliases)


def _chain(node: ast.AST) -> tuple[list[str], ast.AST]:
    """For a.b.c returns (["a", "b", "c"] minus the base, base node)."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return list(reversed(attrs)), node


def _root_name(node: ast.AST) -> str | None:
    while True:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            return node.id
        else:
            return None


def names_in_module(path: str) -> collections.Counter:
    text = open(path, encoding="utf-8").read()
    tree = ast.parse(text)
    lines = verbatim_lines(text)
    aliases = tf_aliases(tree)
    foreign = other_modules(tree, aliases)

    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    # variables assigned from calls on foreign modules (rng = np.random.RandomState(...)) are foreign too
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _root_name(node.value.func) in foreign:
            foreign.update(target.id for target in node.targets if isinstance(target, ast.Name))

    counts = collections.Counter()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.lineno not in lines:
            continue
        parent = parents.get(node)
        attrs, base = _chain(node)
        if isinstance(base, ast.Name) and base.id in aliases:
            # count the outermost attribute of a tf chain only
            if isinstance(parent, ast.Attribute) and parent.value is node:
                continue
            counts[aliases[base.id] + "." + ".".join(attrs)] += 1
            continue
        if _root_name(node.value) in foreign:
            continue
        called = isinstance(parent, ast.Call) and parent.func is node
        attr = node.attr
        if attr in TENSOR_ATTRS and not (called and attr in {"values"} and not parent.args):
            if attr in {"min", "max"} and called:
                continue
            counts["<tensor>." + attr] += 1
        elif called and attr in DATASET_METHODS:
            counts["<Dataset>." + attr] += 1
        elif attr in OPTIONS_ATTRS and not called:
            counts["<Options>." + attr] += 1
        elif called and attr in TENSORARRAY_METHODS:
            counts["<TensorArray>." + attr] += 1
        elif called and attr in TABLE_METHODS:
            counts["<table>." + attr] += 1
    return counts


def count(paths: list[str]) -> tuple[dict[str, collections.Counter], collections.Counter, collections.Counter]:
    per_module = {os.path.splitext(os.path.basename(p))[0]: names_in_module(p) for p in paths}
    modules = collections.Counter()
    totals = collections.Counter()
    for counts in per_module.values():
        for name, n in counts.items():
            modules[name] += 1
            totals[name] += n
    return per_module, modules, totals


def table(modules: collections.Counter, totals: collections.Counter) -> list[tuple[str, int, int]]:
    return sorted(((n, modules[n], totals[n]) for n in totals), key=lambda r: (-r[1], -r[2], r[0]))


def render_markdown(rows, per_module, n_modules: int) -> str:
    kinds = collections.Counter(name.split(".")[0] if name.startswith("<") else "tf" for name, _, _ in rows)
    out = [
        "# TensorFlow names used by the porting corpus",
        "",
        "Written by `tests/porting/count_names.py` (do not edit by hand). Counted over the verbatim parts of the "
        f"{n_modules} corpus modules (see that script's docstring for what is counted and how).",
        "",
        f"{len(rows)} distinct names: "
        + ", ".join(
            f"{kinds[k]} {k}"
            for k in ("tf", "<Dataset>", "<tensor>", "<Options>", "<TensorArray>", "<table>")
            if kinds[k]
        )
        + ".",
        "",
        "| name | modules | uses |",
        "| --- | ---: | ---: |",
    ]
    out += [f"| `{name}` | {m} | {t} |" for name, m, t in rows]
    out += ["", "## Distinct names per module", "", "| module | distinct names | uses |", "| --- | ---: | ---: |"]
    for slug, counts in sorted(per_module.items()):
        out.append(f"| {slug} | {len(counts)} | {sum(counts.values())} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-write", action="store_true", help="print only; do not write corpus/NAMES.md")
    args = parser.parse_args(argv)

    paths = corpus_paths()
    per_module, modules, totals = count(paths)
    rows = table(modules, totals)
    width = max(len(name) for name, _, _ in rows)
    print(f"{'name':<{width}}  modules  uses")
    for name, m, t in rows:
        print(f"{name:<{width}}  {m:7d}  {t:4d}")
    print(f"{len(rows)} distinct names in {len(paths)} modules")
    if not args.no_write:
        with open(os.path.join(CORPUS, "NAMES.md"), "w", encoding="utf-8") as f:
            f.write(render_markdown(rows, per_module, len(paths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The pipeline graph: the kinds of steps, and walk / find / replace over nodes.

A :class:`~parafeed.core.dataset.Dataset` is a node: its public ``parents`` are the nodes it reads from, its ``kind``
says how its elements relate to theirs, and a batching step gives its ``batch_size``. Code that inspects or rewrites a
pipeline (replica sharding, resume, balance, checkpoints, adapters) goes through the functions here; rewrites build
new nodes with ``node.with_parents(...)`` and never change a node in place.

The kinds:

* ``SOURCE``: brings data in (arrays, ranges, generators, files). A file reader's parent is the dataset of file
  names it reads; other sources have none.
* ``ONE_TO_ONE``: one output per input element, in input order (``map``, ``prefetch``, ``with_options``).
* ``REORDERING``: the input's elements (or one output each) in another order (``shuffle``,
  ``map(deterministic=False)``, ``cache``, whose later passes replay the first pass's order).
* ``BATCHING``: consecutive input elements stacked into batches of ``batch_size`` (``batch``, ``padded_batch``,
  ``equal_steps``; ``weighted_batch``, whose sizes vary, has no ``batch_size``).
* ``MANY_TO_MANY``: anything else (``filter``, ``take``, ``repeat``, ``interleave``, ``window``, ``zip`` ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from parafeed.core.dataset import Dataset

SOURCE = "source"
ONE_TO_ONE = "one-to-one"
REORDERING = "reordering"
BATCHING = "batching"
MANY_TO_MANY = "many-to-many"
KINDS = (SOURCE, ONE_TO_ONE, REORDERING, BATCHING, MANY_TO_MANY)
COUNT_PRESERVING = (ONE_TO_ONE, REORDERING)

N = TypeVar("N")


def walk(root: Dataset, into_sources: bool = True) -> Iterator[Dataset]:
    """Every node of the pipeline once: ``root`` first, then depth first, parents in order.

    With ``into_sources=False`` the walk does not enter a source's own inputs (a reader's file names).
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if into_sources or node.kind != SOURCE:
            stack.extend(reversed(node.parents))


@overload
def find(root: Dataset, what: Callable[[Dataset], bool], into_sources: bool = True) -> list[Dataset]: ...
@overload
def find(root: Dataset, what: type[N], into_sources: bool = True) -> list[N]: ...


def find(root: Dataset, what: type[Any] | Callable[[Dataset], bool], into_sources: bool = True) -> list[Any]:
    """The nodes that are instances of ``what`` (a class) or for which ``what(node)`` is true, in walk order."""
    test = (lambda n: isinstance(n, what)) if isinstance(what, type) else what
    return [n for n in walk(root, into_sources) if test(n)]


def sources(root: Dataset) -> list[Dataset]:
    """The nodes data comes from (not descending into a reader's file names)."""
    return [n for n in walk(root, into_sources=False) if n.kind == SOURCE]


def down(node: Dataset, through: Callable[[Dataset], bool]) -> Dataset:
    """Follow single parents from ``node`` while ``through(node)`` holds; the first node where it does not."""
    while len(node.parents) == 1 and through(node):
        node = node.parents[0]
    return node


def chain(top: Dataset, bottom: Dataset) -> list[Dataset] | None:
    """The nodes from ``top`` down to (not including) ``bottom`` when each has a single parent; else None."""
    nodes, node = [], top
    while node is not bottom:
        if len(node.parents) != 1:
            return None
        nodes.append(node)
        node = node.parents[0]
    return nodes


def count_preserving(node: Dataset) -> bool:
    """Whether ``node`` gives exactly one output per input element (in any order)."""
    return node.kind in COUNT_PRESERVING and len(node.parents) == 1


def batching_step(node: Dataset) -> Dataset | None:
    """The batching step whose batches ``node`` yields, reached through count-preserving steps, or None."""
    found = down(node, count_preserving)
    return found if found.kind == BATCHING else None


def replace(root: Dataset, target: Dataset, replacement: Dataset) -> Dataset:
    """``root`` with the node ``target`` replaced by ``replacement``; the nodes between are rebuilt with
    ``with_parents`` (the original pipeline is left as it was)."""
    if root is target:
        return replacement
    parents = tuple(replace(p, target, replacement) for p in root.parents)
    if all(a is b for a, b in zip(parents, root.parents)):
        return root
    return root.with_parents(*parents)


def static_shapes(node: Dataset) -> bool:
    """Whether ``node.element_spec``'s shapes are derived statically, as tf.data's (not read off a sample element
    of a user function's output, whose dimensions may vary)."""
    return node._static_shapes()


def replica_counts(node: Dataset, start: Any = 0) -> list[int] | None:
    """How many elements every replica's pipeline yields at ``node`` when a ``distribute`` split upstream makes that
    known, for a pass that begins ``start`` samples into the global order; None when unknowable (after a ``filter``).
    """
    return node._replica_counts(start)


def count(node: Dataset) -> int:
    """``node``'s element count, as ``cardinality()`` but also counting the records of files (TFRecord files by
    their index) through count-preserving steps: what replica sharding needs to give every replica the same number
    of steps. Negative (UNKNOWN or INFINITE) when that cannot be known without iterating."""
    known = node._cardinality()
    if known >= 0:
        return known
    if node.kind == SOURCE:
        return node._count_records()
    if count_preserving(node):
        return count(node.parents[0])
    return known


def batched_cardinality(n: int, batch_size: int, drop_remainder: bool) -> int:
    """How many batches of ``batch_size`` ``n`` elements make (UNKNOWN or INFINITE ``n`` stays as it is)."""
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


def batched_counts(counts: list[int] | None, batch_size: int, drop_remainder: bool) -> list[int] | None:
    """Every replica's batch count from its element count (see ``Dataset._replica_counts``)."""
    return None if counts is None else [batched_cardinality(c, batch_size, drop_remainder) for c in counts]

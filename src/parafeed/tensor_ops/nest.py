"""``pf.nest``: TensorFlow's ``tf.nest`` on parafeed's structures (tuples, lists, namedtuples, dicts: dicts in sorted
key order, as TensorFlow flattens them)."""

from __future__ import annotations

from typing import Any

from parafeed.errors import InvalidArgumentError
from parafeed.values.structure import flatten as _flatten
from parafeed.values.structure import is_nested, map_structure, pack_as, same_structure


def flatten(structure: Any, expand_composites: bool = False) -> list[Any]:
    return _flatten(structure)


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    return pack_as(structure, list(flat_sequence))


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    if not same_structure(nest1, nest2, check_types):
        raise InvalidArgumentError(f"The two structures don't have the same nested structure: {nest1!r:.100} and "
                                   f"{nest2!r:.100}")  # fmt: skip


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]

"""Types of the optional C extension ``parafeed.io._native`` (built from ``_native.c``, whose comments give the
contracts); the modules that use it fall back to Python when it was not built."""

from collections.abc import Callable, Sequence
from typing import Any

from typing_extensions import Buffer

def frame_records(
    buf: Buffer, pos: int, crc_fn: Callable[[bytes], int] | None, max_records: int, /
) -> tuple[list[bytes], int, int, int]: ...
def decode_examples(
    serialized: Sequence[bytes], keys: tuple[bytes, ...], kinds: Buffer, /
) -> tuple[tuple[bytes, Any], ...] | None: ...  # per key: (counts, values: packed numbers, or a list of strings)

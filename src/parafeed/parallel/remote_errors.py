"""Exceptions raised in another process (a worker process, a Ray actor) and re-raised in the consumer.

:func:`pack_error` runs where the exception happened, :func:`unpack_error` where it is raised again: the same
exception class (even one defined in the user's main script) with the original traceback as its cause.
"""

from __future__ import annotations

import pickle
import traceback


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (set as the exception's ``__cause__``)."""

    def __str__(self) -> str:
        text: str = self.args[0]
        return "\n\n" + text


def pack_error(err: BaseException) -> tuple[bytes, str]:
    """An exception as bytes (by cloudpickle, so a class defined in the user's main script, which came here by value
    with the function, goes back as that class) and its traceback; a RuntimeError with its text when it cannot be
    pickled at all."""
    import cloudpickle

    text = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    err.__traceback__ = None
    try:
        return cloudpickle.dumps(err), text
    except Exception:
        return pickle.dumps(RuntimeError(f"{type(err).__name__}: {err}")), text


def unpack_error(packed: tuple[bytes, str]) -> BaseException:
    """The exception a worker raised (its own class, even one defined in the main script: cloudpickle sends such
    classes by value and maps them back to the original), with the worker's traceback as its cause."""
    blob, text = packed
    try:
        err: BaseException = pickle.loads(blob)
    except Exception as failure:
        err = RuntimeError(f"an exception that could not be sent back from the worker ({failure!r}): {text}")
    err.__cause__ = RemoteTraceback(text)
    return err

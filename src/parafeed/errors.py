"""Exceptions raised by parafeed.

Every error parafeed raises on purpose derives from :class:`ParafeedError`, and also from the built-in exception a
caller would naturally catch (``ValueError``, ``TypeError``, ``RuntimeError``), so ``except ValueError`` keeps
working for code ported from tf.data.
"""

from __future__ import annotations


class ParafeedError(Exception):
    """Base class of the errors parafeed raises itself."""


class InvalidArgumentError(ParafeedError, ValueError):
    """An argument or an element has a value the step cannot accept."""


class ElementTypeError(ParafeedError, TypeError):
    """An element or a function result has the wrong structure or dtype for the step."""


class ArgumentTypeError(ParafeedError, TypeError):
    """An argument has the wrong type (a Dataset or Options was expected), or ``len()`` was asked of a dataset whose
    length is infinite or unknown (a TypeError, as in tf.data)."""


class ParseError(InvalidArgumentError):
    """Serialized data (a tf.train.Example, a CSV line) cannot be parsed as the given features."""


class DataLossError(ParafeedError, ValueError):
    """Stored data is corrupt or truncated (bad checksum, short read, unfinished file)."""


class NotFoundError(ParafeedError, FileNotFoundError):
    """A file or saved dataset that a step reads does not exist (tf.errors.NotFoundError)."""


class AlreadyExistsError(ParafeedError, FileExistsError):
    """The destination of a ``copy`` or ``rename`` exists and ``overwrite`` is False (tf.errors.AlreadyExistsError)."""


class PermissionDeniedError(ParafeedError, PermissionError):
    """A file was used against its mode (read from a GFile open for writing ...) or the system refused access
    (tf.errors.PermissionDeniedError)."""


class UnavailableError(ParafeedError, OSError):
    """A service could not be reached: a remote file after retrying, the other replicas (tf.errors.UnavailableError)."""


class WorkerError(ParafeedError, RuntimeError):
    """A worker thread or process died or failed outside the user's function."""


class CancelledError(ParafeedError, RuntimeError):
    """A wait was abandoned because the pipeline it served was closed."""


class StateError(ParafeedError, ValueError):
    """An iterator's position cannot be saved, or a saved state does not fit the pipeline it is restored into."""


class FailedPreconditionError(ParafeedError, RuntimeError):
    """The pipeline is not in a state the operation needs (tf.data's ``FailedPreconditionError``): a dataset had
    another number of elements than ``assert_cardinality`` asserted, or an infinite one was asked for an index."""


class OutOfRangeError(ParafeedError, IndexError):
    """An index is past the end of a dataset (tf.data's ``OutOfRangeError`` from ``experimental.at``)."""


class UnknownError(ParafeedError, RuntimeError):
    """An outside library failed in a way parafeed cannot classify (tf.errors.UnknownError), e.g. a SQL query."""

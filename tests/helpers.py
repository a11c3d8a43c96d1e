"""Helpers shared by tests: exact comparison of elements, the way tf.data's `as_numpy_iterator` gives them; an
iterator drained past the errors it raises; free ports for the multi-process jobs."""

from __future__ import annotations

import random
import socket
from typing import Any

import numpy as np

from parafeed.values.tensor import Tensor


def describe(element: Any) -> Any:
    """A comparable description of an element: structure, leaf types, dtypes, shapes and values (of a Tensor a loop
    took from ``iter(ds)``: its ``.numpy()``, as of TensorFlow's EagerTensor)."""
    if isinstance(element, Tensor):
        element = element.numpy()
    if isinstance(element, dict):
        return ("dict", tuple((k, describe(v)) for k, v in element.items()))
    if isinstance(element, tuple):
        kind = type(element).__name__ if hasattr(type(element), "_fields") else "tuple"
        return (kind, tuple(describe(v) for v in element))
    if isinstance(element, bytes):
        return ("bytes", element)
    if isinstance(element, np.ndarray):
        if element.dtype == object:
            return ("ndarray", "string", element.shape, tuple(element.reshape(-1).tolist()))
        return ("ndarray", element.dtype.str, element.shape, element.tobytes())
    if isinstance(element, np.generic):
        return ("scalar", element.dtype.str, element.tobytes())
    raise AssertionError(f"not an element leaf: {type(element).__name__} {element!r}")


def assert_elements_equal(expected: list, actual: list, context: str = "") -> None:
    """Same number of elements, and each with the same structure, leaf types, dtypes, shapes and values."""
    assert len(actual) == len(expected), f"{context}: {len(actual)} elements, expected {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        de, da = describe(e), describe(a)
        assert da == de, f"{context}: element {i} differs:\n  expected {e!r}\n  actual   {a!r}"


def drain(iterable: Any, error: type[BaseException]) -> tuple[list, list[tuple[int, BaseException]]]:
    """Every element of ``iterable`` and every ``error`` it raised on the way, with the number of elements before it
    (iteration goes on after an error, as tf.data's does after a failed element)."""
    it = iter(iterable)
    got: list = []
    errors: list[tuple[int, BaseException]] = []
    while True:
        try:
            got.append(next(it))
        except StopIteration:
            return got, errors
        except error as err:
            errors.append((len(got), err))


def offload_errors_in_place(**offload: Any) -> BaseException:
    """``range(1001).map(f).offload(**offload)`` with ``f`` failing on element 77 (unbatched, a partial last block when
    ``block`` does not divide 1001): every other result comes in order and the error is raised at its position, as on
    one host; returns the error for checks of its cause."""
    import parafeed as pf

    def f(x: Any) -> Any:
        if x == 77:
            raise ValueError("element 77 is bad")
        return np.float32(x) / 2

    got, errors = drain(pf.Dataset.range(1001).map(f).offload(**offload), ValueError)
    assert [float(x) for x in got] == [x / 2 for x in range(1001) if x != 77]
    ((position, err),) = errors
    assert position == 77 and "element 77 is bad" in str(err)
    return err


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports on 127.0.0.1, free now, between Ray's worker ports (10002-19999 by default) and the
    kernel's ephemeral range. A port from that range (binding to port 0 gives one) can go to another process's
    outgoing connection between its release and the job's bind, and the job then fails to start (TensorFlow: "Could
    not start gRPC server")."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    ports: list[int] = []
    while len(ports) < n:
        port = random.randrange(20000, max(20001, ephemeral))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use
        if port not in ports:
            ports.append(port)
    return ports

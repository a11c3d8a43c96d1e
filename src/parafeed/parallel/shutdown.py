"""Ending the feed with the process: at exit, on SIGTERM, after Ctrl-C or an exception in the training loop, at
once and silently, with no worker process and no shared-memory segment left behind.

Training scripts often stop mid-epoch and never close their iterators. What owns worker processes or shared memory
says so here, and this module ends it:

* **At exit** (the script ends, ``sys.exit``, an exception or ``KeyboardInterrupt`` that ends the script): one
  ``atexit`` handler, while the interpreter still works, sets :func:`exiting`, closes every object given to
  :func:`close_at_exit` that is still open (their ``close()`` checks :func:`exiting` and stops their processes at
  once instead of keeping them warm), then runs the :func:`at_exit` functions in the order they were given (the pools,
  the spare workers). Nothing is left for the garbage collector during the interpreter's teardown, where a
  ``__del__`` can neither import nor start a thread (:func:`finalizing` tells it so).
* **On SIGTERM**, where its disposition is the default (the process dies at once, no ``atexit`` runs): a handler,
  installed the first time this process starts a worker process or creates a segment (from the main thread), runs the
  :func:`on_terminate` functions (kill the worker processes, remove the segments: nothing there takes a lock the
  interrupted code may hold) twice, the second time after the other threads had a moment to finish what they were
  making (which they then remove themselves: :func:`terminating`), restores the default and sends SIGTERM again, so
  the process still ends as killed by SIGTERM. A handler the user installed is left alone: it usually exits
  through ``sys.exit``, which is the exit above.
* **Worker processes** ignore SIGINT (Ctrl-C reaches the trainer, which stops them) and exit when the trainer goes.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

_owners: weakref.WeakKeyDictionary[Any, None] = weakref.WeakKeyDictionary()  # objects with a close(): closed first
# at exit, in the order they were given (a consumer is made before the workers it starts, and is closed first)
_after: list[Callable[[], None]] = []  # then these, in order
_terminate: list[Callable[[], None]] = []  # run by the SIGTERM handler
_state = {"exiting": False, "handler": False, "terminating": False}


def exiting() -> bool:
    """True once the interpreter has begun to exit: close at once, keep nothing warm, start no thread."""
    return _state["exiting"]


def finalizing() -> bool:
    """True where a ``__del__`` must do nothing: the exit handler has run (it closed what was open) or the
    interpreter is tearing itself down."""
    return _state["exiting"] or sys.is_finalizing()


def close_at_exit(owner: Any) -> None:
    """Call ``owner.close()`` at exit if it is still alive then (held weakly; a second ``close()`` must be a no-op);
    owners are closed in the order they were given."""
    _owners[owner] = None
    watch_sigterm()


def at_exit(fn: Callable[[], None]) -> None:
    """Run ``fn`` at exit, after the owners are closed (in the order of the calls)."""
    _after.append(fn)


def on_terminate(fn: Callable[[], None]) -> None:
    """Run ``fn`` when SIGTERM ends the process (the last given first); it must take no lock that the interrupted
    code may hold."""
    _terminate.insert(0, fn)


def terminating() -> bool:
    """True once SIGTERM is ending the process: a segment made now is removed by its maker at once."""
    return _state["terminating"]


def ending() -> bool:
    """True once the process is ending, at exit or on SIGTERM: a worker that stops now is not replaced."""
    return _state["exiting"] or _state["terminating"]


def watch_sigterm() -> None:
    """Install the SIGTERM handler (once, from the main thread, where SIGTERM still has its default disposition)."""
    if _state["handler"] or threading.current_thread() is not threading.main_thread():
        return
    _state["handler"] = True
    with contextlib.suppress(ValueError, OSError):  # (no signals here: an embedded interpreter)
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: Any) -> None:
    _state["terminating"] = True
    for fn in _terminate:
        with contextlib.suppress(Exception):
            fn()
    time.sleep(0.02)  # a thread that was making something when the signal came finishes it, and sees terminating()
    for fn in _terminate:
        with contextlib.suppress(Exception):
            fn()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


@atexit.register
def _at_exit() -> None:
    _state["exiting"] = True
    for owner in list(_owners):
        with contextlib.suppress(Exception):
            owner.close()
    for fn in _after:
        with contextlib.suppress(Exception):
            fn()

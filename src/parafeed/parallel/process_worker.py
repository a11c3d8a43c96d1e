"""The worker process of the process executor: ``python -m parafeed.parallel.process_worker FD IN_RING OUT_RING``.

Started by :mod:`parafeed.parallel.processes` as a fresh interpreter (no fork of a process that may run threads,
no re-run of the user's main script). A message ``("init", sys.path, cloudpickled function)`` gives it the function
to run (first, and again whenever it moves to a new pool); any other message is a task ``(seq, encoded chunk,
places, forget)``, answered with ``(seq, encoded outcomes, seconds)``: ``places`` is None or, for each element,
where its result goes in a shared batch (:mod:`parafeed.parallel.shared_batches`), and ``forget`` names shared
batches removed since the last task. ``None`` or a closed connection ends the worker; it also ends when its parent
process goes away.
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing.connection import Connection
from typing import Any

from parafeed.parallel.remote_errors import pack_error


def serve(conn: Connection, in_name: str, out_name: str) -> None:
    import cloudpickle

    from parafeed.parallel.shared_batches import Attachments
    from parafeed.parallel.shm import RingClosed, ShmRing, decode, encode
    from parafeed.parallel.threads import run_chunk

    parent = os.getppid()
    try:
        in_ring, out_ring = ShmRing(name=in_name), ShmRing(name=out_name)
    except FileNotFoundError:  # stopped before it got this far (a spare not needed): nothing to do
        return
    attachments = Attachments()

    def orphaned() -> bool:
        return os.getppid() != parent

    fn: Any = None  # the function, from the first "init" message
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            if message[0] == "init":  # a function to run from now on (the first one, or a new pool's)
                _, path, fn_blob = message
                sys.path[:] = path
                fn, attachments = cloudpickle.loads(fn_blob), Attachments()
                continue
            seq, encoded, places, forget = message
            attachments.forget(forget)
            chunk = decode(encoded, in_ring)
            if places is None:
                outcomes, seconds = run_chunk(fn, chunk)
            else:
                outcomes, seconds = run_chunk(attachments.placing(fn), list(zip(chunk, places)))
            del chunk
            outcomes = [(ok, value if ok else pack_error(value)) for ok, value in outcomes]
            try:
                conn.send((seq, encode(outcomes, out_ring, orphaned), seconds))
            except (RingClosed, OSError):
                break
    finally:
        in_ring.close()
        out_ring.close()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the consumer; it stops the workers
    serve(Connection(int(sys.argv[1])), sys.argv[2], sys.argv[3])

"""``pf.adapters.jax``: batches as ``jax.Array``s sharded over the devices (4 CPU devices in this process), placed
ahead of the loop with an exact position; a job of 2 JAX processes (2 CPU devices each, gloo collectives) whose
global batches are made of both processes' shares, with equal steps agreed through jax.distributed."""

import json
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")  # (installed by `make test`: the dev extra)
jax.config.update("jax_num_cpu_devices", 4)  # (before the first use of a device; no other test of a worker uses JAX)

from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

import parafeed as pf  # noqa: E402
from parafeed.errors import ArgumentTypeError, InvalidArgumentError  # noqa: E402
from tests import host  # noqa: E402
from tests.adapters.data import WORKER_MODES, worker_batch, worker_batches  # noqa: E402
from tests.adapters.test_tf import finish, run_job  # noqa: E402
from tests.helpers import free_ports  # noqa: E402


def element(i):
    return {"x": np.full((3,), i, np.float32), "id": np.int32(i), "name": b"n%d" % i}


def pipeline(n=40, batch=8):
    return pf.Dataset.range(n).map(element).batch(batch, drop_remainder=True)


def test_batches_are_sharded_over_every_device_and_equal_the_pipelines():
    assert jax.device_count() == 4
    expected = list(pipeline().as_numpy_iterator())
    stats = pf.feed.FeedStats()
    got = list(pipeline().to_jax(stats=stats))
    assert len(got) == len(expected) == 5
    for batch, want in zip(got, expected):
        x = batch["x"]
        assert isinstance(x, jax.Array) and x.dtype == np.float32 and x.shape == (8, 3)
        assert x.sharding == NamedSharding(Mesh(np.array(jax.devices()), ("batch",)), PartitionSpec("batch"))
        # each device holds its own 2 rows of the batch
        shards = sorted(x.addressable_shards, key=lambda s: s.index[0].start)
        assert [s.device for s in shards] == jax.devices()
        for k, shard in enumerate(shards):
            np.testing.assert_array_equal(np.asarray(shard.data), want["x"][2 * k : 2 * k + 2])
        np.testing.assert_array_equal(np.asarray(batch["id"]), want["id"])
        assert isinstance(batch["name"], np.ndarray) and batch["name"].tolist() == want["name"].tolist()
    assert stats.elements == 40


def test_dtypes_are_jaxs_own_and_scalars_are_replicated():
    ds = (
        pf.Dataset.range(8)
        .map(lambda i: (i, np.float64(i) / 2, np.uint8(i)))
        .batch(4)
        .map(lambda a, b, c: (a, b, c, 7))
    )
    batch = next(iter(ds.to_jax()))
    assert [leaf.dtype for leaf in batch] == [jax.device_put(leaf).dtype for leaf in next(iter(ds))]
    assert batch[3].shape == () and int(batch[3]) == 7 and batch[3].sharding.is_fully_replicated


def test_a_given_sharding_or_device():
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("data", "model"))
    batch = next(iter(pipeline().map(lambda e: e["x"]).to_jax(NamedSharding(mesh, PartitionSpec("data", None)))))
    assert batch.sharding.spec == PartitionSpec("data", None) and len(batch.sharding.device_set) == 4
    device = jax.devices()[2]
    one = next(iter(pipeline().to_jax(device)))
    assert one["x"].devices() == {device} and one["id"].devices() == {device}
    assert pipeline().to_jax(device).dataset.options().autotune.executor is None  # (on accelerators: "process")


@pytest.mark.parametrize("mode", WORKER_MODES)
def test_batches_kept_from_the_workers_shared_memory_stay_as_they_were(mode):
    # (JAX may keep the host memory it is given, or copy it after the call returns: a segment reused under a kept
    # batch would change it)
    kept = list(worker_batches(mode).to_jax())
    assert len(kept) == 24
    for k, batch in enumerate(kept):
        np.testing.assert_array_equal(np.asarray(batch), worker_batch(k))


def test_state_dict_is_exact_while_batches_are_placed_ahead():
    def make():
        return pf.Dataset.range(64).shuffle(16, seed=3).map(element).batch(4).to_jax(ahead=3)

    whole = [np.asarray(b["id"]).tolist() for b in make()]
    feed = make()
    it = iter(feed)
    first = [np.asarray(next(it)["id"]).tolist() for _ in range(5)]
    state = json.loads(json.dumps(feed.state_dict()))
    it.close()
    resumed = make()
    resumed.load_state_dict(state)
    assert first + [np.asarray(b["id"]).tolist() for b in resumed] == whole


def test_errors_name_the_fix():
    with pytest.raises(InvalidArgumentError, match=r"shape \(6,\).*multiple of jax.local_device_count\(\)"):
        next(iter(pipeline(batch=6).to_jax()))
    with pytest.raises(ArgumentTypeError, match=r"unknown keyword argument\(s\) \['device'\]"):
        pipeline().to_jax(device="gpu")
    with pytest.raises(InvalidArgumentError, match="distribute is False"):
        pipeline().to_jax(policy="DATA")
    with pytest.raises(InvalidArgumentError, match="must be a jax.sharding.Sharding or a jax.Device"):
        pipeline().to_jax("batch")

    def bad(i):
        if i == 3:
            raise ValueError("element 3 is bad")
        return i

    with pytest.raises(ValueError, match="element 3 is bad"):  # a pipeline's error reaches the loop in its place
        list(pf.Dataset.range(8).map(bad).batch(4).to_jax())


@pytest.mark.timeout(300)
def test_two_jax_processes_feed_global_batches_with_agreed_equal_steps(tmp_path):
    port = free_ports(1)[0]
    outs = [tmp_path / f"process{p}.json" for p in range(2)]
    jobs = [run_job(["tests.adapters.jobs.jax_processes", str(p), str(port), str(outs[p])]) for p in range(2)]
    for job in jobs:
        finish(job, 240)
    results = [json.loads(o.read_text()) for o in outs]
    for mode in ("split", "known", "agreed"):
        first, second = (r[mode] for r in results)
        # the same global batches on both processes: each the two processes' rows, every id once, equal steps
        assert first == second
        ids = [i for batch in first["ids"] for i, w in zip(*batch) if w == 1]
        assert sorted(ids) == sorted(set(ids)) == first["expected"]
        assert all(len(batch[0]) == 8 for batch in first["ids"])  # 4 rows from each process
    assert [results[0][mode]["steps"] for mode in ("split", "known", "agreed")] == [5, 6, 4]


def test_import_parafeed_loads_no_framework():
    code = (
        "import sys, parafeed as pf; pf.adapters.jax, pf.adapters.torch, pf.feed.FeedStats; "
        "print(sorted(m for m in ('jax', 'torch', 'tensorflow') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=host.seconds(120))
    assert done.stdout.strip() == "[]", done.stderr

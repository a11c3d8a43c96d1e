import json
import threading
import time

import numpy as np
import pytest
import torch

import parafeed as pf
from tests.adapters.data import WORKER_MODES, worker_batch, worker_batches, write_files
from tests.adapters.test_tf import finish, run_job
from tests.helpers import free_ports

SIZES = [50, 7, 23, 2, 31]


def test_to_torch_shares_memory_and_keeps_structure():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    names = np.array([b"a", b"b", b"c", b"d", b"e", b"f"], dtype=object)
    ds = pf.Dataset.from_tensor_slices({"x": x, "name": names, "n": np.arange(6)}).batch(4)
    batches = list(ds.to_torch())
    assert [set(b) for b in batches] == [{"x", "name", "n"}] * 2
    assert isinstance(batches[0]["x"], torch.Tensor) and batches[0]["x"].dtype == torch.float32
    assert batches[1]["name"] == [b"e", b"f"] and batches[1]["n"].tolist() == [4, 5]
    assert len(ds.to_torch()) == 2
    big = pf.Dataset.from_tensors(np.ones((512, 1024), np.float32)).map(lambda a: a * 2).batch(1)
    array = next(iter(big))
    tensor = pf.adapters.torch.to_tensor(array)
    assert tensor.data_ptr() == array.ctypes.data  # no copy
    assert pf.adapters.torch.to_tensor(np.int64(3)).shape == ()


def test_to_torch_with_a_data_loader():
    ds = pf.Dataset.range(10).batch(4).to_torch()
    assert [b.tolist() for b in torch.utils.data.DataLoader(ds, batch_size=None)] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],
    ]


@pytest.mark.timeout(300)
def test_ddp_two_ranks_equal_steps_and_exact_speed_weighted_gradients(tmp_path):
    files = write_files(tmp_path, SIZES)
    port = free_ports(1)[0]
    outs = [tmp_path / f"rank{r}.json" for r in range(2)]
    jobs = [run_job(["tests.adapters.jobs.ddp", str(r), "2", str(port), str(outs[r]), *files]) for r in range(2)]
    for job in jobs:
        finish(job, 240)
    ranks = [json.loads(o.read_text()) for o in outs]
    # 1. whole uneven files per rank (104 vs 9 records), equal steps: the same step count, every sample once
    assert [r["plan"] for r in ranks] == ["FILE", "FILE"]
    assert ranks[0]["steps"] == ranks[1]["steps"] == ranks[0]["len"] == 13
    assert sorted(ranks[0]["ids"] + ranks[1]["ids"]) == list(range(sum(SIZES)))
    # 2. speed-weighted: every global batch split between the ranks, rows moved to the faster rank 0 ...
    sizes = np.array([ranks[0]["sizes"], ranks[1]["sizes"]])
    assert sizes.shape[1] == 3 * 10  # 113 records in global batches of 12: 10 steps per epoch, 3 epochs
    totals = sizes.sum(axis=0)
    assert (totals[:9] == 12).all() and totals[9] == 5
    assert (sizes[:, :4] == 6).all()  # windows 0 and 1 (every=2): the initial equal split
    assert (sizes[0, 4:9] > sizes[1, 4:9]).all()  # then from the step times every rank recorded
    # ... and the result is exactly plain SGD on the global batches' mean loss
    assert ranks[0]["param_change"] > 0.1
    assert ranks[0]["max_param_difference"] < 1e-6


def test_torch_adapter_state_dict_resumes_a_pass():
    ds = (
        pf.Dataset.range(40)
        .shuffle(8, seed=2, reshuffle_each_iteration=False)
        .map(lambda x: x * 2)
        .batch(4)
        .prefetch(2)
    )
    full = [b.tolist() for b in ds.to_torch()]
    feed = ds.to_torch()
    loader = torch.utils.data.DataLoader(feed, batch_size=None)
    first = []
    for batch in loader:
        first.append(batch.tolist())
        if len(first) == 4:
            state = json.loads(json.dumps(feed.state_dict()))
            break
    assert state["steps"] == 4 and state["samples"] == 16
    resumed = ds.to_torch()
    resumed.load_state_dict(state)
    assert first + [b.tolist() for b in torch.utils.data.DataLoader(resumed, batch_size=None)] == full
    between = json.loads(json.dumps(resumed.state_dict()))  # between passes: how the next one starts
    assert set(between) == {"run"}
    feed = ds.to_torch()
    feed.load_state_dict(between)
    assert [b.tolist() for b in feed] == [b.tolist() for b in resumed]  # the same next pass


def test_torch_adapter_resumes_on_another_world_size_and_later_epochs_are_whole():
    """Bug: after load_state_dict with another world size, every later epoch lost the samples of the resumed one."""

    def feed(world, rank):
        ds = pf.Dataset.range(60).shuffle(60, seed=3).distribute(world, rank, policy="DATA").batch(5).equal_steps()
        return ds.to_torch()

    saving = feed(4, 0)
    for step, _ in enumerate(saving, 1):
        if step == 2:
            state = json.loads(json.dumps(saving.state_dict()))
            break
    assert state["samples"] == 2 * 5 * 4
    feeds = [feed(2, r) for r in range(2)]
    for f in feeds:
        f.load_state_dict(state)
    epochs = [[int(v) for f in feeds for xs, ws in f for v, w in zip(xs, ws) if w > 0] for _ in range(3)]
    assert len(epochs[0]) == 60 - 40 and len(set(epochs[0])) == 20  # the rest of the saved epoch
    for later in epochs[1:]:
        assert sorted(later) == list(range(60))  # whole epochs again
    assert epochs[1] != epochs[2]  # reshuffled each epoch


def test_to_torch_on_a_device_gives_the_same_batches_readied_ahead_on_the_feeds_thread():
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    names = np.array([str(i).encode() for i in range(20)], dtype=object)
    ds = pf.Dataset.from_tensor_slices({"x": x, "name": names, "n": np.arange(20)}).batch(6)
    plain = list(ds.to_torch())
    for device in ("cpu", torch.device("cpu")):
        batches = list(ds.to_torch(device=device, ahead=3))
        assert len(batches) == len(plain) == 4
        for got, want in zip(batches, plain):
            assert (
                got["x"].device.type == "cpu" and torch.equal(got["x"], want["x"]) and got["x"].dtype == torch.float32
            )
            assert torch.equal(got["n"], want["n"]) and got["name"] == want["name"]


def test_to_torch_on_a_device_resumes_exactly_mid_pass_though_it_reads_ahead():
    ds = pf.Dataset.range(40).shuffle(8, seed=2, reshuffle_each_iteration=False).map(lambda x: x * 2).batch(4)
    full = [b.tolist() for b in ds.to_torch()]
    feed = ds.to_torch(device="cpu", ahead=3)
    first = []
    for batch in feed:
        first.append(batch.tolist())
        if len(first) == 4:
            time.sleep(0.2)  # the feed's thread has read 3 batches ahead by now
            state = json.loads(json.dumps(feed.state_dict()))
            break
    assert state["steps"] == 4 and state["samples"] == 16
    resumed = ds.to_torch(device="cpu")
    resumed.load_state_dict(state)
    assert first + [b.tolist() for b in resumed] == full


@pytest.mark.parametrize("device", [None, "cpu"])
def test_to_torch_raises_an_error_at_its_batch_and_ends_the_pass(device):
    def check(x):
        if x == 9:
            raise ValueError("element 9 is bad")
        return x

    feed = iter(pf.Dataset.range(16).map(check).batch(4).to_torch(device=device))
    assert [next(feed).tolist(), next(feed).tolist()] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(ValueError, match="element 9 is bad"):
        next(feed)
    assert list(feed) == []  # (an IterableDataset's pass is a generator: an exception ends it)
    assert not [t for t in threading.enumerate() if t.name == "parafeed-feed"]  # the feed stopped with it


def test_to_torch_rejects_unknown_keywords_and_distribute_arguments_without_distribute():
    ds = pf.Dataset.range(8).batch(2)
    with pytest.raises(TypeError, match=r"unknown keyword argument\(s\) \['devce'\]"):
        ds.to_torch(devce="cuda")
    with pytest.raises(ValueError, match=r"\['num_replicas'\] are distribute\(\)'s arguments.*distribute=True"):
        ds.to_torch(num_replicas=2)
    with pytest.raises(ValueError, match="`ahead` must be an int >= 0"):
        ds.to_torch(device="cpu", ahead=-1)
    assert [b.tolist() for b in ds.to_torch(True, num_replicas=2, replica_id=1, policy="DATA")] == [[1, 3], [5, 7]]


@pytest.mark.parametrize("device", [None, "cpu"])
@pytest.mark.parametrize("mode", WORKER_MODES)
def test_tensors_kept_from_the_workers_shared_memory_stay_as_they_were(mode, device):
    # (CPU tensors share the batch's memory: its segment must not go back to its pool while one is kept)
    kept = list(worker_batches(mode).to_torch(device=device))
    assert len(kept) == 24
    for k, batch in enumerate(kept):
        assert torch.equal(batch, torch.from_numpy(worker_batch(k)))


def test_a_feed_to_an_accelerator_runs_autotune_maps_on_processes_unless_the_pipeline_says_otherwise():
    ds = pf.Dataset.range(8).map(lambda x: x, num_parallel_calls=pf.AUTOTUNE).batch(2)
    assert ds.to_torch(device="cuda").dataset.options().autotune.executor == "process"  # (built, not iterated)
    assert ds.to_torch(device=torch.device("cuda", 1)).dataset.options().autotune.executor == "process"
    for feed in (ds.to_torch(), ds.to_torch(device="cpu")):
        assert feed.dataset.options().autotune.executor is None
    threads = pf.Options()
    threads.autotune.executor = "thread"
    assert ds.with_options(threads).to_torch(device="cuda").dataset.options().autotune.executor == "thread"


def test_feed_stats_count_what_the_loop_took_and_the_process_cpu_per_element():
    stats = pf.feed.FeedStats()
    ds = pf.Dataset.range(1000).map(lambda x: np.full((64,), x, np.float32)).batch(50)
    assert sum(len(b) for b in ds.to_torch(device="cpu", stats=stats)) == 1000
    assert stats.batches == 20 and stats.elements == 1000
    assert 0.0 < stats.cpu_per_element() < 0.01  # seconds: some CPU, far from a millisecond per element

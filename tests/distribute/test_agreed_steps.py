"""equal_steps() without known counts: the replicas agree step by step through torch.distributed (3 gloo ranks on
127.0.0.1, tests/adapters/jobs/ddp_agreed.py), and a single replica needs no one to agree with."""

import json

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from tests import host
from tests.adapters.test_tf import finish, run_job
from tests.helpers import free_ports

pytestmark = pytest.mark.timeout(300)

WORLD = 3


def uneven(x):
    return x % 5 != 0 and (x % 3 != 1 or x < 30)


def run_ranks(tmp_path, mode, expect_exit=None):
    port = free_ports(1)[0]
    outs = [tmp_path / f"{mode}{r}.json" for r in range(WORLD)]
    jobs = [run_job(["tests.adapters.jobs.ddp_agreed", mode, str(r), str(WORLD), str(port), str(outs[r])])
            for r in range(WORLD)]  # fmt: skip
    for r, job in enumerate(jobs):
        if expect_exit is not None and r in expect_exit:
            job.communicate(timeout=host.seconds(240))
            assert job.returncode == expect_exit[r]
        else:
            finish(job, 240)
    return {r: json.loads(o.read_text()) for r, o in enumerate(outs) if o.exists()}


def shares(keep):
    return [[x for x in range(r, 120, WORLD) if keep(x)] for r in range(WORLD)]


def test_ranks_with_unknown_uneven_counts_run_equal_steps_with_every_sample_once(tmp_path):
    ranks = run_ranks(tmp_path, "all")
    counts = [len(s) for s in shares(uneven)]
    assert counts == [32, 8, 32]  # 4, 1 and 4 batches of 8
    assert all(r["len"] == pf.UNKNOWN for r in ranks.values())
    everyone = sorted(x for s in shares(uneven) for x in s)
    for e in range(2):  # pad under DDP, two epochs: 4 steps on every rank, each kept id once
        assert [ranks[r]["pad"][e][1] for r in range(WORLD)] == [4, 4, 4]
        assert sorted(x for r in range(WORLD) for x in ranks[r]["pad"][e][0]) == everyone
    assert ranks[0]["params"] == ranks[1]["params"] == ranks[2]["params"]
    # drop: every rank stops at the shortest share's count, its ids the first batch of each share
    assert [ranks[r]["drop"][1] for r in range(WORLD)] == [1, 1, 1]
    assert [ranks[r]["drop"][0] for r in range(WORLD)] == [s[:8] for s in shares(uneven)]
    # repeat: 4 steps; the short rank starts its share again
    assert [ranks[r]["repeat"][1] for r in range(WORLD)] == [4, 4, 4]
    assert ranks[1]["repeat"][0] == shares(uneven)[1] * 4
    # an empty share pads with zeros of the element spec (weight 0)
    empty = shares(lambda x: x % 3 != 2 and x % 5 != 0)
    assert [len(s) for s in empty] == [32, 32, 0]
    assert [ranks[r]["empty"][1] for r in range(WORLD)] == [4, 4, 4]
    assert [ranks[r]["empty"][0] for r in range(WORLD)] == empty


def test_a_rank_that_dies_makes_the_others_fail_clearly_not_hang(tmp_path):
    ranks = run_ranks(tmp_path, "die", expect_exit={1: 3})
    for r in (0, 2):
        assert ranks[r]["error"] is not None, ranks[r]
        assert "equal_steps(): replica" in ranks[r]["error"] and "a replica died" in ranks[r]["error"]


def test_one_replica_with_unknown_counts_needs_no_agreement():
    ds = pf.Dataset.range(100).distribute(1, 0, policy="DATA").filter(lambda x: x % 3 == 0).batch(8).equal_steps()
    batches = list(ds)
    assert len(batches) == 5 and ds.cardinality() == pf.UNKNOWN
    ids = np.concatenate([x[w == 1] for x, w in batches])
    assert ids.tolist() == list(range(0, 100, 3))
    it = iter(ds)  # a state saved mid-epoch resumes exactly
    first = [next(it) for _ in range(2)]
    again = iter(ds)
    again.set_state(it.get_state())
    rest = list(again)
    assert [x.tolist() for x, _ in first + rest] == [x.tolist() for x, _ in batches]


def test_without_a_process_group_several_replicas_are_told_what_to_do():
    ds = pf.Dataset.range(100).distribute(2, 0, policy="DATA").filter(lambda x: x % 3 == 0).batch(8).equal_steps()
    with pytest.raises(InvalidArgumentError, match="torch.distributed.*pass `steps=`"):
        next(iter(ds))
    no_split = pf.Dataset.range(100).filter(lambda x: x % 3 == 0).batch(8)
    with pytest.raises(InvalidArgumentError, match="no distribute"):
        no_split.equal_steps()

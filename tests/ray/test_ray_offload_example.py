"""examples/ray_offload.py joins the tests' multi-node Ray cluster (``--address``, as on a real cluster) and trains
under MirroredStrategy fed by Ray input workers, with the batches it promises."""

import re

import pytest

from tests.test_examples import number_after, run_example


@pytest.mark.timeout(240)
def test_ray_offload_trains_under_mirrored_strategy_fed_by_ray_input_workers(ray_cluster, tmp_path):
    out = run_example("ray_offload", tmp_path, 220, "--address", ray_cluster.address)
    assert re.search(r"Ray: 4 CPUs on 4 node\(s\)", out), out
    assert "offloaded == on this host: True" in out
    assert "MirroredStrategy: 2 replicas; 1 Ray input worker(s) per replica" in out
    assert number_after("test accuracy:", out) > 0.8

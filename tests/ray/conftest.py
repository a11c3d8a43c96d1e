"""A real multi-node Ray cluster on 127.0.0.1 for the Ray tests: a head and three worker nodes of one CPU each.

Tests that kill a node add their own first (:func:`extra_node`), so the cluster keeps its size for the next test.
The cluster is shared by the tests of this package and stopped after the last of them (not at the end of the session:
an idle cluster's processes would keep using CPU while the rest of the suite runs).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

NODE = {"num_cpus": 1, "object_store_memory": 80 * 2**20}


@pytest.fixture(scope="package")
def ray_cluster():
    temp = tempfile.mkdtemp(prefix="pfray-", dir="/tmp")  # short: Ray's socket paths have a length limit
    environment = {
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # stay on 127.0.0.1
        "RAY_TMPDIR": temp,
    }
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    os.makedirs(os.path.join(temp, "ray"))
    from ray.cluster_utils import Cluster

    import ray

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "temp_dir": os.path.join(temp, "ray")})
    for _ in range(3):
        cluster.add_node(**NODE)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()
    shutil.rmtree(temp, ignore_errors=True)
    for name, value in saved.items():  # the later tests' processes do not inherit this cluster's settings
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def extra_node(ray_cluster):
    """A fourth worker node, for a test to kill; removed afterwards if it is still there."""
    node = ray_cluster.add_node(**NODE)
    ray_cluster.wait_for_nodes()
    wait_for_cpus(5)
    yield node
    if node in ray_cluster.worker_nodes:
        ray_cluster.remove_node(node)


def wait_for_cpus(n: int, timeout: float = 30.0) -> None:
    """Until the cluster has ``n`` CPUs (a new node takes a moment to show its resources)."""
    import time

    import ray

    deadline = time.monotonic() + timeout
    while ray.cluster_resources().get("CPU", 0) < n:
        assert time.monotonic() < deadline, f"the Ray cluster never reached {n} CPUs: {ray.cluster_resources()}"
        time.sleep(0.1)


def wait_for_free_cpus(n: int, timeout: float = 30.0) -> None:
    """Until ``n`` of the cluster's CPUs are free (a killed actor's CPU shows as free a moment later)."""
    import time

    import ray

    deadline = time.monotonic() + timeout
    while ray.available_resources().get("CPU", 0) < n:
        assert time.monotonic() < deadline, f"the Ray cluster never had {n} CPUs free: {ray.available_resources()}"
        time.sleep(0.1)

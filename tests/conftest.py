"""Shared test set-up: quiet TensorFlow (when a test imports it) and a small shared element comparator; how the tests
are shared out between pytest-xdist's workers (``-n 2 --dist loadgroup``)."""

import os

import pytest
from hypothesis import settings

from tests import host

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

# Property tests (hypothesis): the same examples on every run of `make test` (derandomized, no example database), so
# a failure reproduces and a pass does not depend on the run; `make fuzz` runs them with HYPOTHESIS_PROFILE=explore,
# which draws new examples every time and keeps the failing ones in .hypothesis/.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# pytest-xdist: the tests that share an expensive fixture go to one worker together, one after the other (so the
# fixture is set up once); every other test is handed out on its own. pytest-xdist's own `xdist_group` mark does not
# work with pytest 9 (it renames `item._nodeid`, which pytest no longer reads), so the groups are named here by node id
# prefix, and the `loadgroup` scheduler below applies them.
XDIST_GROUPS = {
    "tests/ray/": "ray",  # one multi-node Ray cluster (tests/ray/conftest.py)
    "tests/storage/": "storage",  # one S3 server (tests/storage/conftest.py)
    # one two-worker TensorFlow job runs every check of the file (tests/adapters/test_tf_multi_worker.py::job_results)
    "tests/adapters/test_tf_multi_worker.py::": "tf-multi-worker",
    "tests/adapters/test_tf_resume.py::": "tf-multi-worker",  # (MWMS jobs one at a time on 2 cores)
}

# Handed out first with pytest-xdist: the longest tests (end-to-end jobs in subprocesses, the soak), so that the run
# does not end with one worker busy on one of them while the other has nothing left to do.
LONG_TESTS = (
    "tests/test_examples.py::",
    "tests/tools/test_demo.py::",
    "tests/adapters/test_tf.py::test_keras_fit_under_mirrored_strategy",
    "tests/adapters/test_torch.py::test_ddp_",
    "tests/adapters/test_torchrun.py::",
    "tests/adapters/test_tf_resume.py::",
    "tests/adapters/test_tf_multi_worker.py::",
    "tests/reliability/test_fuzz.py::test_short_fuzz_run",
    "tests/reliability/test_soak.py::",
)


def pytest_configure(config):
    host.start_suite()


def pytest_unconfigure(config):
    host.end_suite()


def xdist_group(nodeid: str) -> str | None:
    return next((group for prefix, group in XDIST_GROUPS.items() if nodeid.startswith(prefix)), None)


@pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist's: unknown to pytest without it)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: the groups of XDIST_GROUPS (largest first, as pytest-xdist orders them), then every other
    test on its own, in collection order."""
    if config.getoption("dist", None) != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid) or nodeid

    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):  # (every worker collects, and orders, the same way)
        items.sort(key=lambda item: not item.nodeid.startswith(LONG_TESTS))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """A test's time limit stretched for this host as it is when the test starts (tests/host.py): fewer cores than the
    suite is sized for, or other work loading it. (Before pytest-timeout reads the limit: tryfirst puts this wrapper
    outside its own.) Whether this worker runs a test, for the other workers' stretch."""
    marker = item.get_closest_marker("timeout")
    limit = float(marker.args[0]) if marker is not None and marker.args else float(item.config.getini("timeout") or 0)
    host.running(True)
    if limit and host.slowdown() > 1:
        item.add_marker(pytest.mark.timeout(host.seconds(limit)), append=False)
    yield
    host.running(False)

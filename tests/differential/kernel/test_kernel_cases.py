"""tf.data's kernel tests, ported: every case in ``cases_*.py`` runs through TensorFlow and parafeed (harness.py)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tests.differential.kernel.harness import REGISTRY, documented, mismatch, run
from tests.differential.libs import pf_lib, tf_lib

tf = pytest.importorskip("tensorflow", reason="the differential suite needs TensorFlow (make test installs it)")
import parafeed as pf  # noqa: E402

for _module in sorted(Path(__file__).parent.glob("cases_*.py")):
    importlib.import_module(f"tests.differential.kernel.{_module.stem}")

TF, PF = tf_lib(), pf_lib()


@pytest.mark.parametrize("case", REGISTRY, ids=[c.name for c in REGISTRY])
def test_case_matches_tf_data(case, tmp_path):
    (tmp_path / "tf").mkdir()
    (tmp_path / "pf").mkdir()
    expected = run(case, TF, str(tmp_path / "tf"))
    actual = run(case, PF, str(tmp_path / "pf"))
    why = mismatch(case, expected, actual, tf, pf)
    if case.differs is None:
        assert why is None, f"{case.name} (from {case.source}):\n{why}"
    else:
        assert documented(case.differs), f"{case.name}: docs/porting.md has no {{#{case.differs}}} section"
        assert why is not None, f"{case.name} now matches tf.data: remove differs={case.differs!r}"


def test_names_are_unique_and_the_port_is_big_enough():
    names = [c.name for c in REGISTRY]
    assert len(names) == len(set(names))
    assert len(REGISTRY) >= 300

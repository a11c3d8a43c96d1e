import io

import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.tools.bench import load_pipeline, run_bench
from parafeed.tools.cli import main


def test_bench_runs_a_script(tmp_path, capsys):
    script = tmp_path / "pipeline.py"
    script.write_text(
        "import numpy as np\nimport parafeed as pf\n"
        "def make_dataset():\n"
        "    return pf.Dataset.range(10**6).map(lambda x: np.sort(np.ones(20000) * x), num_parallel_calls=2).batch(8)\n"
    )
    assert main(["bench", str(script), "--seconds", "1"]) == 0
    out = capsys.readouterr().out
    assert "elements in" in out and "bottleneck:" in out and "Map" in out
    (tmp_path / "bad.py").write_text("x = 1\n")
    with pytest.raises(InvalidArgumentError, match="must define"):
        load_pipeline(str(tmp_path / "bad.py"))
    stages, _wall, count = run_bench(pf.Dataset.range(5), 10, io.StringIO())
    assert count == 5 and stages[0].elements == 5

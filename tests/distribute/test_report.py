import math

import numpy as np
import pytest

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.tools import cli
from parafeed.tools.convert import convert
from tests.distribute.test_sharding import write_files
from tests.tools.test_convert import make_images


def test_figures_of_a_balanced_and_a_skewed_split():
    even = pf.distribute.report([[0, 0, 1, 2], [0, 1, 0, 2]])
    assert even.counts == [4, 4] and even.max_min == 1.0
    assert even.kl == [0.0, 0.0] and even.class_deviation == 0.0
    skewed = pf.distribute.report([[0, 0, 0, 0, 0, 0], [1, 1, 0]], class_names=["cat", "dog"])
    assert skewed.counts == [6, 3] and skewed.max_min == 2.0
    p0, p1, q = np.array([1.0, 0.0]), np.array([1 / 3, 2 / 3]), np.array([7 / 9, 2 / 9])
    expected = [float(np.sum(p[p > 0] * np.log(p[p > 0] / q[p > 0]))) for p in (p0, p1)]
    np.testing.assert_allclose(skewed.kl, expected)
    assert skewed.class_deviation == pytest.approx(2.5)  # 6 cats vs an ideal 3.5 per replica
    assert math.isinf(pf.distribute.report([[0], []]).max_min)


def test_table_lists_every_replica_and_the_figures():
    table = pf.distribute.report([[0, 0, 1], [1, 1]], ["cat", "dog"], title="demo split").table().splitlines()
    assert table[0] == "demo split"
    assert table[1].split() == ["replica", "samples", "cat", "dog", "KL"]
    assert table[2].split()[:4] == ["0", "3", "2", "1"] and table[3].split()[:4] == ["1", "2", "0", "2"]
    assert table[-1].startswith("max/min samples: 1.500")


def test_png_is_written(tmp_path):
    path = pf.distribute.report([[0, 1, 2] * 5, [0, 1] * 7]).to_png(str(tmp_path / "balance.png"))
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = pf.image.decode_png(data)
    assert image.shape[0] > 300 and image.shape[1] > 500


def test_report_errors():
    with pytest.raises(InvalidArgumentError, match="at least one replica"):
        pf.distribute.report([])
    with pytest.raises(InvalidArgumentError, match="class ids >= 0"):
        pf.distribute.report([[0, -1]])


@pytest.mark.parametrize("policy", ["FILE", "RECORD", "DATA"])
def test_plan_labels_are_what_each_replica_reads(tmp_path, policy):
    files = write_files(tmp_path, [7, 12, 5, 9], classes=3)
    spec = {"label": pf.io.FixedLenFeature([], "int64")}
    for r in range(3):
        ds = pf.TFRecordDataset(files).distribute(3, r, policy=policy)
        read = [int(pf.io.parse_single_example(x, spec)["label"]) for x in ds]
        assert pf.distribute.plan_labels(ds.plan, files)[r].tolist() == read


def test_cli_report_compares_policies_on_convert_output(tmp_path, capsys):
    make_images(tmp_path / "src", [12, 3, 6], size=16)
    convert(str(tmp_path / "src"), str(tmp_path / "out"), 2, workers=1)
    assert cli.main(["report", str(tmp_path / "out"), "--replicas", "3", "--policy", "FILE"]) == 0
    text = capsys.readouterr().out
    # two shards for three replicas: FILE falls back to RECORD
    assert "RECORD sharding" in text.splitlines()[0] and "would starve replicas" in text
    png = tmp_path / "labels.png"
    assert cli.main(["report", str(tmp_path / "out"), "--replicas", "3", "--policy", "LABELS", "--png", str(png)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "LABELS sharding" in lines[0]
    rows = [line.split() for line in lines[2:5]]
    assert [int(row[1]) for row in rows] == [7, 7, 7]
    assert {tuple(row[2:5]) for row in rows} == {("4", "1", "2")}  # 12, 3, 6 dealt evenly: within 1 of the share
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert cli.main(["report", str(tmp_path / "missing"), "--replicas", "2"]) == 2

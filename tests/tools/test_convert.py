import hashlib
import json
import os

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parafeed as pf
from parafeed.errors import InvalidArgumentError
from parafeed.io.manifest import manifest_features, manifest_files, read_manifest
from parafeed.tools.cli import main
from parafeed.tools.convert import convert, plan_shards
from tests import host


@settings(max_examples=200, deadline=None)
@given(labels=st.lists(st.integers(0, 6), min_size=1, max_size=300), shards=st.integers(1, 12), seed=st.integers(0, 5))
def test_plans_are_balanced_and_stratified(labels, shards, seed):
    plan = plan_shards(len(labels), labels, shards, seed)
    assert sorted(i for shard in plan for i in shard) == list(range(len(labels)))
    sizes = [len(s) for s in plan]
    assert max(sizes) - min(sizes) <= 1
    for c in set(labels):
        ideal = labels.count(c) / shards
        for shard in plan:
            assert abs(sum(labels[i] == c for i in shard) - ideal) < 1
    assert plan == plan_shards(len(labels), labels, shards, seed)


def make_images(root, counts, size=48):
    rng = np.random.default_rng(0)
    for c, n in enumerate(counts):
        os.makedirs(root / f"class_{c}" / "sub", exist_ok=True)
        for i in range(n):
            img = cv2.GaussianBlur(rng.integers(0, 255, (size, size + 8, 3), dtype=np.uint8), (7, 7), 3)
            folder = root / f"class_{c}" / ("sub" if i % 2 else "")
            ext = ".png" if i % 3 == 0 else ".jpg"
            cv2.imwrite(str(folder / f"img{i}{ext}"), img)


def digest(folder):
    return {
        f: hashlib.sha256((folder / f).read_bytes()).hexdigest()
        for f in sorted(os.listdir(folder))
        if f.endswith(".tfrecord")
    }


def test_image_folder_roundtrip(tmp_path):
    make_images(tmp_path / "src", [5, 8, 3])
    (tmp_path / "src" / "class_1" / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 truncated")
    (tmp_path / "src" / "class_1" / "notes.txt").write_text("not an image")
    result = convert(str(tmp_path / "src"), str(tmp_path / "out"), 3, workers=2)
    m = read_manifest(str(tmp_path / "out"))
    assert m["num_records"] == 16 and m["label_names"] == ["class_0", "class_1", "class_2"]
    assert m["label_counts"] == {"0": 5, "1": 8, "2": 3}
    assert [s["records"] for s in m["shards"]] == [6, 5, 5]
    assert m["skipped"][0]["path"].endswith("broken.jpg") and "cannot decode" in m["skipped"][0]["reason"]
    assert not [f for f in os.listdir(tmp_path / "out") if ".tmp" in f]
    records = list(
        pf.TFRecordDataset(manifest_files(m)).map(lambda r: pf.io.parse_single_example(r, manifest_features(m)))
    )
    assert len(records) == 16
    by_name = {r["filename"].decode(): r for r in records}
    first = by_name[os.path.join("class_0", "img0.png")]
    image = pf.image.decode_image(first["image"])
    assert image.shape == (48, 56, 3) and (first["height"], first["width"]) == (48, 56) and first["format"] == b"png"
    assert first["class"] == b"class_0" and first["label"] == 0
    assert result.manifest_path.endswith("src.manifest.json")


def test_output_depends_only_on_input_and_seed(tmp_path):
    make_images(tmp_path / "src", [4, 4])
    convert(str(tmp_path / "src"), str(tmp_path / "a"), 2, seed=7, workers=1)
    convert(str(tmp_path / "src"), str(tmp_path / "b"), 2, seed=7, workers=2)
    convert(str(tmp_path / "src"), str(tmp_path / "c"), 2, seed=8, workers=2)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert digest(tmp_path / "a") != digest(tmp_path / "c")


def test_strict_and_overwrite(tmp_path):
    make_images(tmp_path / "src", [2])
    (tmp_path / "src" / "class_0" / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    with pytest.raises(InvalidArgumentError, match="unreadable"):
        convert(str(tmp_path / "src"), str(tmp_path / "out"), 1, strict=True, workers=1)
    convert(str(tmp_path / "src"), str(tmp_path / "out"), 1, workers=1)
    with pytest.raises(InvalidArgumentError, match="--overwrite"):
        convert(str(tmp_path / "src"), str(tmp_path / "out"), 1, workers=1)
    convert(str(tmp_path / "src"), str(tmp_path / "out"), 2, workers=1, overwrite=True)
    assert len(manifest_files(read_manifest(str(tmp_path / "out")))) == 2
    assert len([f for f in os.listdir(tmp_path / "out") if f.endswith(".tfrecord")]) == 2


def test_csv_and_npz(tmp_path):
    (tmp_path / "t.csv").write_text('f1,f2,name,label\n1,2.5,a,cat\n2,3.5,b,dog\n3,4.5,c,cat\n4,5.5,"d,e",bird\n')
    m = convert(str(tmp_path / "t.csv"), str(tmp_path / "csv"), 2, workers=1).manifest
    assert m["label_names"] == ["bird", "cat", "dog"] and m["features"]["f2"] == {"dtype": "float32", "shape": []}
    rows = sorted(pf.TFRecordDataset(manifest_files(read_manifest(str(tmp_path / "csv")))).map(
        lambda r: pf.io.parse_single_example(r, manifest_features(m))), key=lambda r: int(r["f1"]))  # fmt: skip
    assert [(int(r["f1"]), float(r["f2"]), r["name"], int(r["label"]), r["label_name"]) for r in rows][3] == (
        4,
        5.5,
        b"d,e",
        0,
        b"bird",
    )
    np.savez(tmp_path / "a.npz", x=np.arange(24, dtype=np.float32).reshape(6, 2, 2), y=np.array([0, 1, 0, 1, 2, 2]))
    m = convert(str(tmp_path / "a.npz"), str(tmp_path / "npz"), 3, label="y", workers=1).manifest
    assert m["features"]["x"] == {"dtype": "float32", "shape": [2, 2]}
    got = {int(r["y"]): r["x"] for r in pf.TFRecordDataset(manifest_files(read_manifest(str(tmp_path / "npz")))).map(
        lambda r: pf.io.parse_single_example(r, manifest_features(m)))}  # fmt: skip
    assert got[2].shape == (2, 2)
    np.savez(tmp_path / "bad.npz", x=np.zeros(3), y=np.zeros(4))
    with pytest.raises(InvalidArgumentError, match="same first dimension"):
        convert(str(tmp_path / "bad.npz"), str(tmp_path / "bad"), 1)


def test_cli_convert_and_inspect(tmp_path, capsys):
    make_images(tmp_path / "src", [3, 3])
    assert main(["convert", str(tmp_path / "src"), str(tmp_path / "out"), "--shards", "2", "--workers", "1"]) == 0
    assert "wrote 6 records in 2 shards" in capsys.readouterr().out
    files = sorted(str(tmp_path / "out" / f) for f in os.listdir(tmp_path / "out") if f.endswith(".tfrecord"))
    assert main(["inspect", *files]) == 0
    out = capsys.readouterr().out
    assert "6 records" in out and "labels: 0: 3, 1: 3" in out and "image: bytes_list x 1" in out
    data = bytearray(open(files[0], "rb").read())
    data[40] ^= 1
    open(files[0], "wb").write(bytes(data))
    assert main(["inspect", "--json", *files]) == 1
    report = json.loads(capsys.readouterr().out)
    assert "corrupted record at byte offset 0" in report[0]["errors"][0]
    assert main(["convert", str(tmp_path / "missing"), str(tmp_path / "x"), "--shards", "1"]) == 2


def test_the_result_lists_its_files_and_progress_can_be_hidden(tmp_path, capfd):
    make_images(tmp_path / "src", [3, 2], size=16)
    result = convert(str(tmp_path / "src"), str(tmp_path / "out"), 2, workers=1, progress=False)
    assert manifest_files(result.manifest) == manifest_files(read_manifest(result.manifest_path))
    assert "shards" not in capfd.readouterr().err  # no progress bar


def test_a_script_without_a_main_guard_gets_a_clear_error(tmp_path):
    import subprocess
    import sys

    make_images(tmp_path / "src", [2, 2], size=16)
    script = tmp_path / "unguarded.py"
    script.write_text(
        f"from parafeed.tools.convert import convert\nconvert({str(tmp_path / 'src')!r}, {str(tmp_path / 'out')!r}, 2)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=host.seconds(120))
    assert done.returncode != 0
    # the error the script ends with (multiprocessing's resource tracker may print a warning after it)
    ending = [line for line in done.stderr.splitlines() if line.startswith("parafeed.errors.WorkerError")]
    assert ending and 'if __name__ == "__main__":' in ending[-1]

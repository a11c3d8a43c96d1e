"""pf.io.gfile on local paths (and memory:// URLs): tf.io.gfile's API, results and errors. The same calls on TensorFlow
are in tests/differential/test_io_ops.py; an S3 endpoint in tests/storage/test_gfile_remote.py."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import parafeed as pf
from parafeed.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError, OutOfRangeError
from parafeed.io.gfile import AlreadyExistsError, FileStatistics, PermissionDeniedError, gfile_v1

gfile = pf.io.gfile


@pytest.fixture
def tree(tmp_path):
    """root/{a/{b/y.txt, x.txt, .h2, we ird[1].txt}, c/, .hidden, top.bin}"""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    (tmp_path / "a" / "x.txt").write_text("hi\n")
    (tmp_path / "a" / "b" / "y.txt").write_text("yo\n")
    for name in (".hidden", "a/.h2", "a/we ird[1].txt"):
        (tmp_path / name).touch()
    (tmp_path / "top.bin").write_bytes(b"z\n")
    return str(tmp_path)


def test_queries(tree):
    assert gfile.exists(tree) and gfile.exists(f"{tree}/a/x.txt") and not gfile.exists(f"{tree}/nope")
    assert gfile.exists(f"file://{tree}/a") and gfile.exists(pathlib.Path(tree))
    assert gfile.isdir(f"{tree}/a") and not gfile.isdir(f"{tree}/top.bin") and not gfile.isdir(f"{tree}/nope")
    assert sorted(gfile.listdir(tree)) == [".hidden", "a", "c", "top.bin"]
    assert sorted(gfile.listdir(tree + "/")) == sorted(gfile.listdir(tree.encode()))
    assert gfile.listdir(f"{tree}/c") == []
    for bad in (f"{tree}/nope", f"{tree}/top.bin"):
        with pytest.raises(NotFoundError, match="Could not find directory") as err:
            gfile.listdir(bad)
        assert bad in str(err.value) and isinstance(err.value, FileNotFoundError)


def test_stat(tree):
    st = gfile.stat(f"{tree}/top.bin")
    assert isinstance(st, FileStatistics)
    assert (st.length, st.is_directory) == (2, False)
    assert st.mtime_nsec == int(os.stat(f"{tree}/top.bin").st_mtime) * 10**9  # whole seconds, as TensorFlow
    assert gfile.stat(f"{tree}/a").is_directory
    with pytest.raises(NotFoundError, match="nope.*check the path"):
        gfile.stat(f"{tree}/nope")


def test_glob_has_tensorflows_rules(tree, monkeypatch):
    def names(pattern):
        return [p[len(tree) + 1 :] for p in gfile.glob(f"{tree}/{pattern}")]

    assert names("*") == [".hidden", "a", "c", "top.bin"]  # dot files match; directories too; sorted
    assert names("**") == names("*")  # no recursion
    assert names("*/*") == ["a/.h2", "a/b", "a/we ird[1].txt", "a/x.txt"]
    assert names("[^a]*") == names("[!a]*") == [".hidden", "c", "top.bin"]
    assert names("?") == ["a", "c"]
    assert names("[a-b]/[b-x]*") == ["a/b", "a/we ird[1].txt", "a/x.txt"]
    assert names("a/we ird\\[1\\].txt") == ["a/we ird[1].txt"]
    assert names("*/b/*.txt") == ["a/b/y.txt"]
    assert names("top.bin/*") == [] and names("zz/*") == [] and names("zz") == []
    assert gfile.glob(f"{tree}/a") == [f"{tree}/a"]  # no wildcard: the path if it exists
    assert gfile.glob([f"{tree}/c", f"{tree}/a"]) == [f"{tree}/c", f"{tree}/a"]
    assert gfile.glob("") == []
    assert gfile.glob(f"file://{tree}/t*") == [f"file://{tree}/top.bin"]
    monkeypatch.chdir(tree)
    assert gfile.glob("*") == ["./.hidden", "./a", "./c", "./top.bin"]  # TensorFlow's ./ prefix
    assert gfile.glob("a/*.txt") == ["a/we ird[1].txt", "a/x.txt"]


def test_walk(tree):
    walked = list(gfile.walk(tree))
    assert walked[0][0] == tree  # parents first
    assert sorted((d, sorted(s), sorted(f)) for d, s, f in walked) == [
        (tree, ["a", "c"], [".hidden", "top.bin"]),
        (f"{tree}/a", ["b"], [".h2", "we ird[1].txt", "x.txt"]),
        (f"{tree}/a/b", [], ["y.txt"]),
        (f"{tree}/c", [], []),
    ]
    bottom_up = [d for d, _, _ in gfile.walk(tree, topdown=False)]
    assert bottom_up[-1] == tree and bottom_up.index(f"{tree}/a/b") < bottom_up.index(f"{tree}/a")
    pruned = []
    for d, subdirs, _ in gfile.walk(tree):
        pruned.append(d)
        if "a" in subdirs:
            subdirs.remove("a")  # as os.walk: not entered
    assert sorted(pruned) == [tree, f"{tree}/c"]
    assert list(gfile.walk(f"{tree}/nope")) == [] and list(gfile.walk(f"{tree}/top.bin")) == []
    errors = []
    assert list(gfile.walk(f"{tree}/nope", onerror=errors.append)) == []
    assert isinstance(errors[0], NotFoundError)
    assert [d for d, _, _ in gfile_v1.Walk(tree, in_order=False)][-1] == tree


def test_directories(tree):
    gfile.mkdir(f"{tree}/new")
    gfile.mkdir(f"{tree}/new")  # there already: nothing happens, as in TensorFlow
    with pytest.raises(NotFoundError):
        gfile.mkdir(f"{tree}/q/r")
    gfile.makedirs(f"{tree}/q/r/s")
    gfile.makedirs(f"{tree}/q/r/s")
    assert gfile.isdir(f"{tree}/q/r/s")
    for blocked in (f"{tree}/top.bin", f"{tree}/top.bin/x"):
        with pytest.raises(FailedPreconditionError, match="not a directory"):
            gfile.makedirs(blocked)
    with pytest.raises(FailedPreconditionError, match="Is a directory"):
        gfile.remove(f"{tree}/c")
    with pytest.raises(NotFoundError):
        gfile.remove(f"{tree}/nope")
    gfile.remove(f"{tree}/a/x.txt")
    assert not gfile.exists(f"{tree}/a/x.txt")
    gfile.rmtree(f"{tree}/q")
    gfile.rmtree(f"{tree}/top.bin")  # a file goes too
    assert not gfile.exists(f"{tree}/q") and not gfile.exists(f"{tree}/top.bin")
    with pytest.raises(NotFoundError):
        gfile.rmtree(f"{tree}/q")


def test_rename_and_copy(tree):
    f1, f2 = f"{tree}/f1", f"{tree}/f2"
    pathlib.Path(f1).write_text("1")
    pathlib.Path(f2).write_text("2")
    for op in (gfile.rename, gfile.copy):
        with pytest.raises(AlreadyExistsError, match="overwrite=True") as err:
            op(f1, f2)
        assert isinstance(err.value, FileExistsError)
    gfile.copy(f1, f2, overwrite=True)
    assert pathlib.Path(f2).read_text() == "1"
    gfile.copy(f1, f"{tree}/c/f3")
    with pytest.raises(InvalidArgumentError, match="directory"):
        gfile.copy(f"{tree}/a", f"{tree}/a2")
    with pytest.raises(FailedPreconditionError, match="Is a directory"):
        gfile.copy(f1, f"{tree}/c", overwrite=True)
    with pytest.raises(NotFoundError, match="gfile.copy"):
        gfile.copy(f"{tree}/nope", f"{tree}/f9")
    with pytest.raises(NotFoundError):
        gfile.copy(f1, f"{tree}/zz/f1")
    gfile.rename(f1, f2, overwrite=True)
    assert not gfile.exists(f1) and pathlib.Path(f2).read_text() == "1"
    with pytest.raises(NotFoundError):
        gfile.rename(f1, f"{tree}/f3")
    gfile.rename(f"{tree}/a", f"{tree}/a2")  # a directory moves whole
    assert gfile.exists(f"{tree}/a2/b/y.txt")
    with pytest.raises(FailedPreconditionError):
        gfile.rename(f2, f"{tree}/c", overwrite=True)


def test_join():
    assert gfile.join("a", "b", "c") == os.path.join("a", "b", "c")
    assert gfile.join("s3://bucket", "k", "x") == "s3://bucket/k/x"
    assert gfile.join("s3://bucket/", "k") == "s3://bucket/k"
    assert gfile.join("a/", "/b") == "/b"


def test_gfile_reads_as_tensorflow(tree):
    path = f"{tree}/t.txt"
    with gfile.GFile(path, "w") as f:
        f.write("héllo\nwörld\n")
        f.write(b"raw\r\nx\ry")  # bytes in a text-mode file too
        assert f.tell() == 22
    with gfile.GFile(path) as f:
        assert f.read(1) == "h" and f.tell() == 1
        assert f.readline() == "éllo\n"
        assert f.readlines() == ["wörld\n", "raw\n", "xy"]  # every \r dropped, as TensorFlow's readline
        assert f.read() == "" and f.readline() == ""
        assert f.size() == 22
    with gfile.GFile(path, "rb") as f:
        assert list(f) == [b"h\xc3\xa9llo\n", b"w\xc3\xb6rld\n", b"raw\n", b"xy"]
        f.seek(3)
        assert (f.tell(), f.read(3)) == (3, b"llo")
        f.seek(-2, 2)
        assert f.read() == b"\ry"
        f.seek(1)
        f.seek(2, 1)
        assert f.tell() == 3
        f.seek(position=0)
        assert f.read(0) == b"" and f.tell() == 0
        with pytest.raises(OutOfRangeError):
            f.seek(100)
        assert f.tell() == 22  # left at the end, as TensorFlow
        with pytest.raises(InvalidArgumentError, match="negative"):
            f.seek(-1)
        with pytest.raises(InvalidArgumentError, match="negative"):
            f.read(-5)
    f = gfile.GFile(path, "rb")
    first = f.read()
    f.close()
    assert f.read() == first  # a read after close starts again, as TensorFlow's GFile
    f.close()
    with pytest.raises(UnicodeDecodeError):
        gfile.GFile(path).read(2)  # n bytes, decoded: a split character fails, as in TensorFlow


def test_gfile_writes_and_appends(tree):
    path = f"{tree}/w.bin"
    with gfile.GFile(path, "wb") as f:
        pass
    assert not os.path.exists(path)  # never written to: not created (TensorFlow opens the file at the first write)
    with gfile.GFile(path, "wb") as f:
        f.write(b"abc")
        f.flush()
        assert gfile.stat(path).length == 3
    with gfile.GFile(path, "ab") as f:
        f.write(b"de")
        assert f.tell() == 5
    assert pathlib.Path(path).read_bytes() == b"abcde"
    with gfile.GFile(path, "a") as f:
        f.write("é")
    assert pathlib.Path(path).read_bytes() == b"abcde\xc3\xa9"
    with pytest.raises(TypeError, match="binary or unicode"):
        gfile.GFile(path, "w").write(5)


def test_gfile_errors(tree):
    with pytest.raises(InvalidArgumentError, match="mode"):
        gfile.GFile(f"{tree}/x", "r+")
    missing = gfile.GFile(f"{tree}/nope")  # opened at the first read, as TensorFlow
    with pytest.raises(NotFoundError, match="nope"):
        missing.read()
    with pytest.raises(NotFoundError, match="makedirs"):
        gfile.GFile(f"{tree}/zz/x", "w").write("a")
    with pytest.raises(FailedPreconditionError, match="Is a directory"):
        gfile.GFile(f"{tree}/a").read()
    with pytest.raises(PermissionDeniedError, match="isn't open for reading"):
        gfile.GFile(f"{tree}/w", "w").read()
    with pytest.raises(PermissionDeniedError, match="isn't open for writing"):
        gfile.GFile(f"{tree}/top.bin").write("x")
    with pytest.raises(PermissionDeniedError):
        gfile.GFile(f"{tree}/w", "w").seek(0)


def test_tf1_names(tree):
    v1 = gfile_v1
    assert v1.Exists(tree) and v1.IsDirectory(tree) and v1.Glob(f"{tree}/c") == [f"{tree}/c"]
    assert sorted(v1.ListDirectory(tree)) == sorted(gfile.listdir(tree))
    v1.MakeDirs(f"{tree}/m/n")
    v1.MkDir(f"{tree}/m/o")
    with v1.GFile(f"{tree}/m/f", "w") as f:
        f.write("x")
    with v1.Open(f"{tree}/m/f") as f, v1.FastGFile(f"{tree}/m/f", "rb") as g:
        assert f.read() == "x" and g.read() == b"x"
    v1.Copy(f"{tree}/m/f", f"{tree}/m/g")
    v1.Rename(f"{tree}/m/g", f"{tree}/m/h")
    assert v1.Stat(f"{tree}/m/h").length == 1
    v1.Remove(f"{tree}/m/h")
    v1.DeleteRecursively(f"{tree}/m")
    assert not v1.Exists(f"{tree}/m")


def test_memory_urls_and_storage_options():
    """Any fsspec URL: memory:// needs no server. Copies and renames between it and local files."""
    root = "memory://gfile-test"
    gfile.makedirs(f"{root}/d")
    with gfile.GFile(f"{root}/d/a.txt", "w") as f:
        f.write("one\ntwo\n")
    with gfile.GFile(f"{root}/d/a.txt", "a") as f:
        f.write("three\n")
    assert list(gfile.GFile(f"{root}/d/a.txt")) == ["one\n", "two\n", "three\n"]
    assert gfile.exists(f"{root}/d") and gfile.isdir(f"{root}/d") and not gfile.isdir(f"{root}/d/a.txt")
    assert gfile.listdir(f"{root}/d") == ["a.txt"]
    assert gfile.glob(f"{root}/*/*.txt") == [f"{root}/d/a.txt"]
    assert gfile.stat(f"{root}/d/a.txt").length == 14
    gfile.copy(f"{root}/d/a.txt", f"{root}/d/b.txt")
    with pytest.raises(AlreadyExistsError):
        gfile.copy(f"{root}/d/a.txt", f"{root}/d/b.txt")
    gfile.rename(f"{root}/d/b.txt", f"{root}/d/c.txt")
    assert sorted(gfile.listdir(f"{root}/d")) == ["a.txt", "c.txt"]
    assert [(d, s, sorted(f)) for d, s, f in gfile.walk(root)] == [
        (root, ["d"], []),
        (f"{root}/d", [], ["a.txt", "c.txt"]),
    ]
    with pytest.raises(NotFoundError, match="memory://gfile-test/nope"):
        gfile.GFile(f"{root}/nope").read()
    with pytest.raises(NotFoundError):
        gfile.remove(f"{root}/nope")
    with pytest.raises(FailedPreconditionError):
        gfile.remove(f"{root}/d")
    gfile.remove(f"{root}/d/c.txt")
    with pytest.raises(RuntimeError), gfile.GFile(f"{root}/d/half.txt", "w") as f:
        f.write("half")
        raise RuntimeError("the writer failed")
    assert not gfile.exists(f"{root}/d/half.txt")  # a URL's file is published whole or not at all
    gfile.rmtree(root)
    assert not gfile.exists(f"{root}/d/a.txt")


def test_copy_and_rename_across_file_systems(tmp_path):
    local = str(tmp_path / "f")
    pathlib.Path(local).write_bytes(b"x" * 100)
    gfile.copy(local, "memory://across/f")
    gfile.rename("memory://across/f", str(tmp_path / "g"))
    assert pathlib.Path(tmp_path / "g").read_bytes() == b"x" * 100 and not gfile.exists("memory://across/f")
    gfile.rename(local, "memory://across/h")
    assert gfile.GFile("memory://across/h", "rb").read() == b"x" * 100 and not os.path.exists(local)
    gfile.rmtree("memory://across")


def test_set_storage_options(monkeypatch):
    seen = []
    import parafeed.io.storage as storage

    real = storage.filesystem

    def spy(url, options, step):
        seen.append(options)
        return real(url, None, step)

    monkeypatch.setattr(storage, "filesystem", spy)
    gfile.set_storage_options({"a": 1})
    gfile.set_storage_options({"b": 2}, "memory")
    try:
        gfile.exists("memory://x")
        gfile.exists("memory://x", storage_options={"c": 3})
        gfile.set_storage_options(None, "memory")
        gfile.exists("memory://x")
    finally:
        gfile.set_storage_options(None)
    assert seen == [{"b": 2}, {"c": 3}, {"a": 1}]
    with pytest.raises(InvalidArgumentError):
        gfile.set_storage_options("key=secret")


def test_import_keeps_fsspec_unloaded():
    code = "import sys, parafeed as pf; pf.io.gfile.exists('/tmp'); print('fsspec' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.strip() == "False"

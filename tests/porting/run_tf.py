"""Run the porting corpus under real TensorFlow.

For each corpus module (tests/porting/corpus/<slug>.py), or the ones named on the command line (slugs or paths): write
the synthetic files it names in ``DATA`` (tests/porting/data.py) into a fresh temporary directory, call its
``build(tf, data_dir)``, iterate the returned dataset to the end, and print the number of elements and the
element_spec, or the exception. Exits non-zero if any entry fails.

    python tests/porting/run_tf.py                 # every entry
    python tests/porting/run_tf.py tfm_bert_pretrain_input docs_load_images
    python tests/porting/run_tf.py --quiet         # one line per entry
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import shutil
import sys
import tempfile
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
MAX_ELEMENTS = 1000  # a build must return a finite dataset; stop counting (and fail) past this


def corpus_paths(names: list[str] | None = None) -> list[str]:
    if not names:
        return sorted(p for p in glob.glob(os.path.join(CORPUS, "*.py")) if not os.path.basename(p).startswith("_"))
    paths = []
    for name in names:
        path = name if name.endswith(".py") else os.path.join(CORPUS, name + ".py")
        if not os.path.exists(path):
            raise SystemExit(f"no corpus entry {name!r} ({path})")
        paths.append(path)
    return paths


def load_module(path: str):
    name = "porting_corpus_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (AutoGraph looks functions' modules up in sys.modules)
    spec.loader.exec_module(module)
    return module


def run_one(path: str, tf, data) -> tuple[bool, str]:
    """Returns (ok, report)."""
    slug = os.path.splitext(os.path.basename(path))[0]
    directory = tempfile.mkdtemp(prefix=f"porting_{slug}_")
    cwd = os.getcwd()  # (a build may chdir into data_dir: notebook code reads relative paths)
    start = time.time()
    try:
        module = load_module(path)
        data.write(module.DATA, directory)
        dataset = module.build(tf, directory)
        count = 0
        for _ in dataset:
            count += 1
            if count > MAX_ELEMENTS:
                raise RuntimeError(f"more than {MAX_ELEMENTS} elements: build() must return a finite dataset")
        spec = dataset.element_spec
        return True, f"{slug}: {count} elements in {time.time() - start:.1f}s\n  element_spec: {spec}"
    except Exception as error:  # (report every failure, go on with the next entry)
        tb = traceback.format_exc(limit=-6)
        return False, f"{slug}: FAILED after {time.time() - start:.1f}s: {type(error).__name__}: {error}\n{tb}"
    finally:
        os.chdir(cwd)
        shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("entries", nargs="*", help="corpus slugs or module paths (default: all)")
    parser.add_argument("--quiet", action="store_true", help="one line per entry (no element_spec)")
    args = parser.parse_args(argv)

    import tensorflow as tf

    sys.path.insert(0, HERE)
    import data

    failures = 0
    paths = corpus_paths(args.entries)
    for path in paths:
        ok, report = run_one(path, tf, data)
        failures += not ok
        print(report.splitlines()[0] if args.quiet and ok else report, flush=True)
    print(f"{len(paths) - failures}/{len(paths)} entries ran under TensorFlow {tf.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

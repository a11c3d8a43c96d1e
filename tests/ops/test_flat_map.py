"""flat_map over files opens the next files ahead (their first requests in flight for remote ones: see
tests/storage/test_remote.py); elements, errors, skips and saved positions are those of opening each file in turn."""

import pytest

import parafeed as pf
from parafeed.errors import NotFoundError
from parafeed.ops import flat_map

COUNTS = [3, 0, None, 2, 4, 1]  # records per file; None: a file that does not exist


@pytest.fixture
def names(tmp_path):
    out = []
    for i, count in enumerate(COUNTS):
        path = str(tmp_path / f"part-{i}.tfrecord")
        if count is not None:
            with pf.io.TFRecordWriter(path) as w:
                for j in range(count):
                    w.write(f"{i}-{j}".encode())
        out.append(path)
    return out


def outcomes(it):
    out = []
    while True:
        try:
            out.append(next(it).numpy().decode())
        except StopIteration:
            return out
        except NotFoundError:
            out.append("ERR")


def pipelines(names):
    return {
        "TFRecordDataset(names)": pf.TFRecordDataset(names),
        "flat_map(TFRecordDataset)": pf.Dataset.from_tensor_slices(names).flat_map(pf.TFRecordDataset),
        "flat_map + map": pf.Dataset.from_tensor_slices(names).flat_map(lambda f: pf.TFRecordDataset(f)).map(bytes),
    }


def test_files_opened_ahead_give_the_same_elements_errors_skips_and_states(names, monkeypatch):
    def run(ds):
        return outcomes(iter(ds)), [outcomes(iter(ds.skip(n))) for n in (2, 3, 5, 8)]

    with monkeypatch.context() as m:
        m.setattr(flat_map, "FILES_AHEAD", 0)  # each file opened when it is reached
        reference = {name: run(ds) for name, ds in pipelines(names).items()}
    for name, ds in pipelines(names).items():
        elements = reference[name][0]
        assert elements == ["0-0", "0-1", "0-2", "ERR", "3-0", "3-1", "4-0", "4-1", "4-2", "4-3", "5-0"]
        assert run(ds) == reference[name], name
        for stop in range(len(elements) + 1):  # a state saved at every position resumes exactly
            it = iter(ds)
            got = outcomes_until(it, stop)
            state = it.get_state()
            again = iter(ds)
            again.set_state(state)
            assert got + outcomes(again) == elements, (name, stop)
            it.close()
            again.close()


def outcomes_until(it, stop):
    out = []
    while len(out) < stop:
        try:
            out.append(next(it).numpy().decode())
        except StopIteration:
            break
        except NotFoundError:
            out.append("ERR")
    return out

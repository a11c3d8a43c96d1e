import time

import pytest

import parafeed as pf


def source(n):
    def gen():
        for i in range(int(n) * 3 % 7):
            if i % 3 == 0:
                time.sleep(0.001)
            yield int(n) * 100 + i

    return pf.Dataset.from_generator(gen, output_signature=pf.TensorSpec((), "int64"))


@pytest.mark.parametrize("cycle, block, calls", [(2, 1, 2), (3, 2, pf.AUTOTUNE), (4, 3, 1), (5, 1, 3)])
def test_deterministic_parallel_interleave_equals_serial(cycle, block, calls):
    serial = [int(x) for x in pf.Dataset.range(12).interleave(source, cycle_length=cycle, block_length=block)]
    parallel = pf.Dataset.range(12).interleave(source, cycle_length=cycle, block_length=block, num_parallel_calls=calls)
    assert [int(x) for x in parallel] == serial


def test_non_deterministic_interleave_keeps_every_element(leak_check):
    ds = pf.Dataset.range(12).interleave(source, cycle_length=4, num_parallel_calls=4, deterministic=False)
    expected = sorted(int(x) for x in pf.Dataset.range(12).interleave(source, cycle_length=4))
    assert sorted(int(x) for x in ds) == expected
    it = iter(ds)
    next(it)
    it.close()
    leak_check.assert_clean()

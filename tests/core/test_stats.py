import numpy as np
import pytest

import parafeed as pf
from parafeed.core.stats import bottleneck, format_stats
from parafeed.errors import InvalidArgumentError


def slow_sort(x):
    return np.sort(np.random.default_rng(int(x)).normal(size=30000))


def test_stats_count_every_stage_and_find_the_bottleneck():
    ds = pf.Dataset.range(200).map(slow_sort, num_parallel_calls=2).batch(10).prefetch(2)
    it = iter(ds.with_options(pf.Options(stats=True)))
    assert len(list(it)) == 20
    stages = {s.name: s for s in it.stats()}
    assert list(stages) == ["Range", "Map", "Batch", "Prefetch"]
    assert stages["Range"].elements == 200 and stages["Map"].elements == 200 and stages["Prefetch"].elements == 20
    assert stages["Map"].threaded and stages["Map"].worker_time > 0 and stages["Map"].parallelism == 2
    assert stages["Map"].bytes == 200 * 30000 * 8
    assert bottleneck(it.stats()).name == "Map"
    assert "bottleneck: Map" in format_stats(it.stats(), 1.0)


def test_stats_are_off_by_default():
    it = iter(pf.Dataset.range(3).map(lambda x: x))
    list(it)
    assert it.stats() == []


def test_options_validate_and_merge():
    with pytest.raises(InvalidArgumentError, match="executor"):
        pf.Options(executor="gpu")
    with pytest.raises(InvalidArgumentError, match="max_workers"):
        pf.Options(max_workers=0)
    ds = pf.Dataset.range(3).with_options(pf.Options(executor="process", stats=True))
    ds = ds.map(lambda x: x).with_options(pf.Options(stats=False, deterministic=False))
    merged = ds.options()
    assert (merged.executor, merged.stats, merged.deterministic) == ("process", False, False)
    with pytest.raises(TypeError):
        ds.with_options({"stats": True})


def test_pf_stats_is_the_documented_namespace():
    assert pf.stats.bottleneck is bottleneck and pf.stats.format_stats is format_stats

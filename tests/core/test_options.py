"""pf.Options: parafeed's own fields, and tf.data.Options' attributes so that options code ports by renaming."""

from __future__ import annotations

import numpy as np
import pytest

import parafeed as pf


def test_tf_style_attribute_setting_ports_by_renaming():
    options = pf.Options()
    options.experimental_distribute.auto_shard_policy = pf.experimental.AutoShardPolicy.DATA
    options.deterministic = False
    options.autotune.enabled = False
    options.threading.private_threadpool_size = 3
    assert options.deterministic is False and options.experimental_deterministic is False
    assert options.resolve("autotune") is False
    assert options.workers == 3
    assert options.shard_policy == "DATA"


def test_the_auto_shard_policy_option_is_distributes_default():
    options = pf.Options()
    options.experimental_distribute.auto_shard_policy = pf.experimental.AutoShardPolicy.DATA
    ds = pf.Dataset.range(10).with_options(options).map(lambda x: x * 10)
    assert [int(x) for x in ds.distribute(2, 1)] == [10, 30, 50, 70, 90]
    off = pf.Options(experimental_distribute=pf.experimental.DistributeOptions(auto_shard_policy=None))
    assert off.shard_policy is None
    options.experimental_distribute.auto_shard_policy = pf.experimental.AutoShardPolicy.OFF
    assert len(list(pf.Dataset.range(10).with_options(options).distribute(2, 1))) == 10
    with pytest.raises(pf.errors.InvalidArgumentError, match="shard\\(num_replicas, replica_id\\)"):
        pf.Dataset.range(4).distribute(2, 0, policy=pf.experimental.AutoShardPolicy.HINT)


def test_with_options_keeps_a_copy():
    options = pf.Options(deterministic=True)
    ds = pf.Dataset.range(3).with_options(options)
    options.deterministic = False
    assert ds.options().deterministic is True


def test_merge_later_steps_win_field_by_field():
    first = pf.Options(stats=True)
    first.autotune.ram_budget = 1 << 20
    second = pf.Options(stats=False)
    second.autotune.enabled = False
    merged = pf.Dataset.range(1).with_options(first).with_options(second).options()
    assert merged.stats is False and merged.autotune.enabled is False and merged.budget == 1 << 20


def test_unknown_names_and_bad_values_are_refused_with_the_option_named():
    options = pf.Options()
    with pytest.raises(AttributeError, match="no option named 'determinstic'"):
        options.determinstic = True
    with pytest.raises(AttributeError, match="no option named 'foo'"):
        options.experimental_distribute.foo = 1
    with pytest.raises(pf.errors.InvalidArgumentError, match="deterministic must be True, False or None"):
        options.deterministic = 1
    with pytest.raises(pf.errors.ArgumentTypeError, match="auto_shard_policy must be a AutoShardPolicy"):
        options.experimental_distribute.auto_shard_policy = "DATA"
    with pytest.raises(pf.errors.InvalidArgumentError, match="max_workers must be an int > 0"):
        pf.Options(max_workers=0)


def test_every_tf_data_option_exists_in_pf_options():
    tf = pytest.importorskip("tensorflow")

    def fields(cls):
        return sorted(n for n in dir(cls) if not n.startswith("_") and isinstance(getattr(cls, n), property))

    tf_options, pf_options = tf.data.Options(), pf.Options()
    missing = []
    for name in fields(type(tf_options)):
        if name == "experimental_service":  # the tf.data service: parafeed scales out with Ray (docs/porting.md)
            continue
        tf_value = getattr(tf_options, name)
        if not hasattr(pf_options, name):
            missing.append(name)
        elif hasattr(type(tf_value), "_options") or type(tf_value).__name__.endswith("Options"):
            missing += [f"{name}.{n}" for n in fields(type(tf_value)) if not hasattr(getattr(pf_options, name), n)]
    assert missing == []
    for name in ("OFF", "AUTO", "FILE", "DATA", "HINT"):
        assert int(getattr(pf.experimental.AutoShardPolicy, name)) == int(
            getattr(tf.data.experimental.AutoShardPolicy, name)
        )


def test_options_run_the_pipeline_as_set():
    options = pf.Options()
    options.autotune.cpu_budget = 1
    ds = pf.Dataset.range(20).map(np.square, num_parallel_calls=pf.AUTOTUNE).with_options(options)
    assert [int(x) for x in ds] == [i * i for i in range(20)]

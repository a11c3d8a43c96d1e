"""Programs built on the library, not part of the engine: the ``parafeed`` command (``cli``), ``convert`` (files to
balanced TFRecord shards), ``inspect`` (what a TFRecord file holds), ``bench`` (a pipeline's per-stage throughput) and
``demo`` (the seed articles' data-parallel flow end to end)."""

"""Real input functions ported by the rename: each entry of the corpus run under TensorFlow and, renamed, under
parafeed (tests/porting/ported.py). ``make test`` runs a few entries (a TFRecord/Example pipeline, an image decoder,
a text pipeline); ``make porting`` runs every entry that ports, and docs/porting.md explains the others."""

import os

import pytest

from tests.porting import ported

QUICK = ["docs_tfrecord", "automl_efficientdet_tf_example_decoder", "trax_text_preprocess"]
# entries that do not port by the rename alone, each explained in docs/porting.md ("The porting corpus")
NOT_PORTED = {"flax_wmt_input", "nvidia_sim_dataloader", "simclr_tf2_input"}
ENTRIES = QUICK if not os.environ.get("PARAFEED_PORTING_ALL") else sorted(set(ported.slugs()) - NOT_PORTED)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("slug", ENTRIES)
def test_entry_gives_tensorflows_elements_after_the_rename(slug):
    outcome, detail = ported.run(slug)
    assert outcome in ("same", "same specs"), f"{slug}: {outcome}: {detail}"

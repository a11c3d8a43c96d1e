"""P5: 2,000 JPEG photos (500x375) in 4 TFRecord shards of tf.Examples -> parse -> decode -> resize to 224x224
-> float32 / 255 -> batch 64, images/s.

parafeed and tf.data read the TFRecord shards; PyTorch's DataLoader and Grain, which cannot read TFRecord, get the
same records from memory and decode them with the same libraries as parafeed (2 workers each). The limits, measured
in the same run: the per-image work alone (decode, resize, /255, results dropped) on one bare thread and on two;
and the pipeline's own work (parse, decode, resize, /255, each result written into its row of a batch) on two bare
threads, which leaves out only the pipeline itself. Every row's share of them is printed.
Usage: python benchmarks/images.py [--runs 5] [--data bench-data]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import harness
import workloads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", default="bench-data")
    args = parser.parse_args()
    paths = workloads.make_photo_shards(os.path.join(args.data, "photos"))
    candidates = {}
    for make in (workloads.image_limits, workloads.image_batch_limit, workloads.parafeed_images, workloads.tf_images,
                 workloads.torch_images, workloads.grain_images):  # fmt: skip
        candidates.update(make(paths))
    rates = harness.run(candidates, runs=args.runs)
    limits = {
        "two bare threads": statistics.median(rates["two bare threads"]),
        "2 x one thread": 2 * statistics.median(rates["one bare thread"]),
        "the same work on two bare threads": statistics.median(rates["two bare threads, parse + batch rows"]),
    }
    harness.report("images", "P5 images: TFRecord -> parse -> decode JPEG -> resize 224 -> /255 -> batch 64", rates,
                   "images/s", baseline="tf.data (AUTOTUNE)", shares=limits)  # fmt: skip
    variants = {**workloads.parafeed_jpeg_variants(paths), **workloads.tf_jpeg_variants(paths)}
    rates = harness.run(variants, runs=args.runs)
    diffs = workloads.jpeg_variant_differences(paths)
    note = (
        f"parafeed against tf.image over 200 photos: decode_and_crop_jpeg differs by at most {diffs['crop max']} "
        f"(bit-exact); decode_jpeg(min_size) + resize by at most {diffs['reduced max vs ratio=2']:.4f} from tf's "
        f"decode_jpeg(ratio=2) + resize, and by {diffs['reduced mean vs full']:.2f} of 255 on average from tf's full "
        "decode + resize (decoding at a reduced scale is not bit-exact: it averages where bilinear resizing samples)."
    )
    harness.report("jpeg-variants", "P5b JPEG decoding on one thread: cropped and reduced-scale decoding", rates,
                   "images/s", baseline="tf.image.decode_and_crop_jpeg", note=note)  # fmt: skip


if __name__ == "__main__":
    main()

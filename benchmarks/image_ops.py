"""pf.image against tf.image, op by op, on one photo-sized image (375x500x3, as in P5) and a batch of 8.

pf.image computes TensorFlow's resize kernels and colour arithmetic in NumPy, bit-exact, instead of calling OpenCV
(whose bilinear and area kernels are not TensorFlow's); this measures what that costs per call against TensorFlow's
C++ kernels, each on one thread (parafeed parallelises across elements, so one call's speed on one core is what
counts). Prints the fastest of ``--runs`` calls (the least disturbed by other processes) in milliseconds, and the
ratio pf / tf. Prints only; nothing is written to docs/benchmarks.md.
Usage: python benchmarks/image_ops.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np


def fastest(fn: Callable[[], object], runs: int) -> float:
    fn()
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def cases(pf, tf, photo: np.ndarray) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    photo_f = photo.astype(np.float32) / 255
    batch = np.stack([photo] * 8)
    t, tf_f, tb = tf.constant(photo), tf.constant(photo_f), tf.constant(batch)
    out: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {}
    for name, x, tx in [("uint8", photo, t), ("float32", photo_f, tf_f)]:
        for method in ("bilinear", "nearest", "bicubic", "area"):
            out[f"resize {method} 224 ({name})"] = (
                lambda x=x, m=method: pf.image.resize(x, (224, 224), m),
                lambda tx=tx, m=method: tf.image.resize(tx, (224, 224), m).numpy(),
            )
    for method in ("bilinear", "lanczos3"):
        out[f"resize {method} antialias 224 (uint8)"] = (
            lambda m=method: pf.image.resize(photo, (224, 224), m, antialias=True),
            lambda m=method: tf.image.resize(t, (224, 224), m, antialias=True).numpy(),
        )
    out["resize bilinear 224, batch of 8 (uint8)"] = (
        lambda: pf.image.resize(batch, (224, 224)),
        lambda: tf.image.resize(tb, (224, 224)).numpy(),
    )
    out["resize bilinear x2 up (uint8)"] = (
        lambda: pf.image.resize(photo, (750, 1000)),
        lambda: tf.image.resize(t, (750, 1000)).numpy(),
    )
    for op, args in [("adjust_brightness", (0.1,)), ("adjust_contrast", (1.3,)), ("adjust_saturation", (1.3,)),
                     ("adjust_hue", (0.1,)), ("rgb_to_grayscale", ())]:  # fmt: skip
        out[f"{op} (uint8)"] = (
            lambda op=op, args=args: getattr(pf.image, op)(photo, *args),
            lambda op=op, args=args: getattr(tf.image, op)(t, *args).numpy(),
        )
    out["flip_left_right + central_crop (uint8)"] = (
        lambda: np.ascontiguousarray(pf.image.central_crop(pf.image.flip_left_right(photo), 0.875)),
        lambda: tf.image.central_crop(tf.image.flip_left_right(t), 0.875).numpy(),
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    import tensorflow as tf

    import parafeed as pf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    photo = np.random.default_rng(0).integers(0, 256, (375, 500, 3)).astype(np.uint8)
    print("| op (375x500x3) | pf.image ms | tf.image ms | pf / tf |\n|---|---|---|---|")
    for name, (ours, theirs) in cases(pf, tf, photo).items():
        a, b = fastest(ours, args.runs), fastest(theirs, args.runs)
        print(f"| {name} | {a:.2f} | {b:.2f} | {a / b:.2f} |")


if __name__ == "__main__":
    main()

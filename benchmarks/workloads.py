"""Workload functions and the anchor libraries' versions of each pipeline, shared by the benchmark scripts.

Every ``*_<workload>`` function returns ``{label: run}`` where ``run()`` does one epoch and returns the number of
elements it produced; a library that is not installed contributes nothing (and is reported missing). Pipelines are
built once and run for several epochs (workers kept between epochs where the library allows it).
"""

from __future__ import annotations

import numpy as np


def multiply_add(x):
    """~1.6 ms of pure Python on the 2-core development machine: 20,000 multiply-adds."""
    acc = 0.0
    for i in range(20000):
        acc = acc * 0.5 + i
    return np.float64(acc + int(x))


def _missing(name: str) -> dict:
    print(f"{name} not installed: skipped")
    return {}


def _count(it) -> int:
    return sum(len(b) if getattr(b, "ndim", 0) else 1 for b in it)


def batch_size(images, labels) -> int:
    """The default way the image runners take a batch: count it (``scaling.py --gpu`` passes one that also copies
    the images to an accelerator)."""
    return len(labels)


def parafeed_python_fn(n: int, batch: int | None) -> dict:
    import parafeed as pf

    def build(**kwargs):
        ds = pf.Dataset.range(n).map(multiply_add, **kwargs)
        return ds if batch is None else ds.batch(batch)

    parallel, serial = build(num_parallel_calls=pf.AUTOTUNE, executor="process"), build()
    return {"parafeed (processes, AUTOTUNE)": lambda: _count(parallel), "parafeed (serial)": lambda: _count(serial)}


def tf_python_fn(n: int, batch: int | None) -> dict:
    try:
        import tensorflow as tf
    except ImportError:
        return _missing("tensorflow")

    def wrapped(x):
        return tf.py_function(lambda v: multiply_add(v.numpy()), [x], tf.float64)

    def build(**kwargs):
        ds = tf.data.Dataset.range(n).map(wrapped, **kwargs)
        return ds if batch is None else ds.batch(batch)

    auto, serial = build(num_parallel_calls=tf.data.AUTOTUNE), build()
    return {
        "tf.data (py_function, AUTOTUNE)": lambda: _count(auto),
        "tf.data (py_function, serial)": lambda: _count(serial),
    }


def torch_python_fn(n: int, batch: int | None) -> dict:
    try:
        import torch.utils.data as tud
    except ImportError:
        return _missing("torch")

    class Items(tud.Dataset):
        def __len__(self) -> int:
            return n

        def __getitem__(self, i: int):
            return multiply_add(i)

    loader = tud.DataLoader(Items(), batch_size=batch, num_workers=2, persistent_workers=True)
    return {"PyTorch DataLoader (2 workers)": lambda: _count(loader)}


def import_grain():
    """Grain, its absl flags marked parsed: it reads them in its worker threads (``UnparsedFlagAccessError`` with
    grain 0.2.18 outside ``absl.app.run``)."""
    import grain
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    return grain


def grain_python_fn(n: int, batch: int | None) -> dict:
    try:
        grain = import_grain()
    except ImportError:
        return _missing("grain")

    def epoch() -> int:
        ds = grain.MapDataset.range(n).map(multiply_add)
        ds = (ds if batch is None else ds.batch(batch)).to_iter_dataset()
        return _count(ds.mp_prefetch(grain.multiprocessing.MultiprocessingOptions(num_workers=2)))

    return {"Grain (2 workers)": epoch}


# ---------------------------------------------------------------------------------------------- P5 images

IMAGE_SIZE = (224, 224)
IMAGE_BATCH = 64


def make_photo_shards(folder: str, count: int = 2000, shards: int = 4) -> list[str]:
    """``count`` JPEG photos (500x375 crops of scikit-learn's two sample photos, quality 90) as tf.Examples in
    ``shards`` TFRecord files; made once and reused."""
    import os

    import parafeed as pf

    paths = [os.path.join(folder, f"photos-{i:05d}-of-{shards:05d}.tfrecord") for i in range(shards)]
    if all(os.path.exists(p) for p in paths):
        return paths
    import cv2
    from sklearn.datasets import load_sample_images

    photos = load_sample_images().images
    rng = np.random.default_rng(0)
    os.makedirs(folder, exist_ok=True)
    writers = [pf.io.TFRecordWriter(p + ".tmp") for p in paths]
    for i in range(count):
        photo = photos[i % len(photos)]
        y, x = rng.integers(0, photo.shape[0] - 375), rng.integers(0, photo.shape[1] - 500)
        crop = photo[y : y + 375, x : x + 500]
        if rng.random() < 0.5:
            crop = crop[:, ::-1]
        jpeg = cv2.imencode(".jpg", np.ascontiguousarray(crop[:, :, ::-1]), [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
        writers[i % shards].write(pf.io.serialize_example({"image": jpeg.tobytes(), "label": i % len(photos)}))
    for w, p in zip(writers, paths):
        w.close()
        os.replace(p + ".tmp", p)
    return paths


def parafeed_images(paths: list[str], take=batch_size, offload: bool = False) -> dict:
    """parafeed's P5 on threads and with ``map(executor="process")``; ``offload``: also the threads pipeline (up to
    its prefetch) run whole on local worker processes, ``offload(executor="process")``."""
    import parafeed as pf

    spec = {"image": pf.io.FixedLenFeature([], "string"), "label": pf.io.FixedLenFeature([], "int64")}

    def preprocess(record):
        example = pf.io.parse_single_example(record, spec)
        image = pf.image.resize(pf.image.decode_jpeg(example["image"], channels=3), IMAGE_SIZE)
        return image / 255.0, example["label"]

    def build(offloaded: bool = False, **kwargs):
        ds = pf.TFRecordDataset(paths, num_parallel_reads=4).map(preprocess, num_parallel_calls=pf.AUTOTUNE, **kwargs)
        ds = ds.batch(IMAGE_BATCH)
        return (ds.offload(executor="process") if offloaded else ds).prefetch(pf.AUTOTUNE)

    datasets = {"parafeed (threads, AUTOTUNE)": build(), "parafeed (processes, AUTOTUNE)": build(executor="process")}
    if offload:
        datasets['parafeed (threads in offload(executor="process"))'] = build(offloaded=True)
    return {label: _epoch(ds, take) for label, ds in datasets.items()}


def _epoch(ds, take):
    return lambda: sum(take(x, y) for x, y in ds)


def image_limits(paths: list[str], threads: int = 2) -> dict:
    """The per-image work alone (decode, resize, /255 on JPEG bytes parsed beforehand, results dropped) on one bare
    thread and on ``threads``: what the machine can do at best, measured in the same run as the libraries."""
    from concurrent.futures import ThreadPoolExecutor

    import parafeed as pf

    spec = {"image": pf.io.FixedLenFeature([], "string")}
    jpegs = [pf.io.parse_single_example(r, spec)["image"] for r in _records(paths)]

    def work(part: list) -> int:
        for jpeg in part:
            pf.image.resize(pf.image.decode_jpeg(jpeg, channels=3), IMAGE_SIZE) / 255.0
        return len(part)

    pool = ThreadPoolExecutor(threads)
    parts = [jpegs[i::threads] for i in range(threads)]
    return {
        "one bare thread": lambda: work(jpegs),
        "two bare threads" if threads == 2 else f"{threads} bare threads": lambda: sum(pool.map(work, parts)),
    }


def image_batch_limit(paths: list[str], threads: int = 2) -> dict:
    """The pipeline's own work without the pipeline, on ``threads`` bare threads: each parses its records (in memory),
    decodes, resizes and scales the photo, and writes the result into its row of a batch (``IMAGE_BATCH`` rows of
    float32, three recycled buffers per thread), as the fused map + batch does; what is left between this and
    parafeed is the pipeline itself (file reading, hand-offs, order)."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    records = _records(paths)

    def work(part: list) -> int:
        batches = [np.empty((IMAGE_BATCH, *IMAGE_SIZE, 3), np.float32) for _ in range(3)]
        for i, record in enumerate(part):
            image, _ = _preprocess_numpy(record)
            batches[i // IMAGE_BATCH % 3][i % IMAGE_BATCH] = image
        return len(part)

    pool = ThreadPoolExecutor(threads)
    parts = [records[i::threads] for i in range(threads)]
    name = "two bare threads" if threads == 2 else f"{threads} bare threads"
    return {f"{name}, parse + batch rows": lambda: sum(pool.map(work, parts))}


def tf_images(paths: list[str], take=batch_size) -> dict:
    try:
        import tensorflow as tf
    except ImportError:
        return _missing("tensorflow")
    spec = {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}

    def preprocess(record):
        example = tf.io.parse_single_example(record, spec)
        image = tf.image.resize(tf.io.decode_jpeg(example["image"], channels=3), IMAGE_SIZE)
        return image / 255.0, example["label"]

    def build(**kwargs):
        ds = tf.data.TFRecordDataset(paths, num_parallel_reads=4).map(preprocess, **kwargs)
        return ds.batch(IMAGE_BATCH).prefetch(tf.data.AUTOTUNE)

    return {
        "tf.data (AUTOTUNE)": _epoch(build(num_parallel_calls=tf.data.AUTOTUNE), take),
        "tf.data (serial)": _epoch(build(), take),
    }


def _records(paths: list[str]) -> list[bytes]:
    import parafeed as pf

    return list(pf.TFRecordDataset(paths))


def _preprocess_numpy(record: bytes):
    import parafeed as pf

    spec = {"image": pf.io.FixedLenFeature([], "string"), "label": pf.io.FixedLenFeature([], "int64")}
    example = pf.io.parse_single_example(record, spec)
    image = pf.image.resize(pf.image.decode_jpeg(example["image"], channels=3), IMAGE_SIZE)
    return image / 255.0, example["label"]


def torch_images(paths: list[str], take=batch_size, workers: int = 2, pin_memory: bool = False) -> dict:
    """PyTorch has no TFRecord reader: a map-style dataset over the records (read into memory once), decoded with
    the same libraries as parafeed, ``workers`` workers."""
    try:
        import torch.utils.data as tud
    except ImportError:
        return _missing("torch")
    records = _records(paths)

    class Photos(tud.Dataset):
        def __len__(self) -> int:
            return len(records)

        def __getitem__(self, i: int):
            return _preprocess_numpy(records[i])

    loader = tud.DataLoader(Photos(), batch_size=IMAGE_BATCH, num_workers=workers, persistent_workers=True,
                            pin_memory=pin_memory)  # fmt: skip
    return {f"PyTorch DataLoader ({workers} workers)": _epoch(loader, take)}


def grain_images(paths: list[str]) -> dict:
    """Grain reads no TFRecord either: the records in memory as its source, the same decoding, 2 workers.

    Each epoch starts Grain's workers anew (and sends them the records): Grain keeps no workers between iterators.
    One iterator over the records repeated would keep them, but its workers then go on reading ahead between epochs,
    on the CPU the rows measured in between need. Batched after ``to_iter_dataset()`` (as in ``gpu_feed.py``, where
    that was twice as fast) this row ran at 13 % of two bare threads here, against 25 % batched before (5 runs each,
    2026-12-02 and 2026-11-26)."""
    try:
        grain = import_grain()
    except ImportError:
        return _missing("grain")
    records = _records(paths)

    def epoch() -> int:
        ds = grain.MapDataset.source(records).map(_preprocess_numpy).batch(IMAGE_BATCH).to_iter_dataset()
        ds = ds.mp_prefetch(grain.multiprocessing.MultiprocessingOptions(num_workers=2))
        return sum(len(y) for _, y in ds)

    return {"Grain (2 workers)": epoch}


# ---------------------------------------------------------------------------------------------- P5b JPEG decoding

CROP = (94, 125, 188, 250)  # [y, x, height, width]: the central quarter of a 375 x 500 photo
SMALL = (112, 112)  # a target much smaller than the photos: the decoder can work at 1/2 scale (250 x 188)


def _jpegs(paths: list[str]) -> list[bytes]:
    import parafeed as pf

    spec = {"image": pf.io.FixedLenFeature([], "string")}
    return [pf.io.parse_single_example(r, spec)["image"] for r in _records(paths)]


def parafeed_jpeg_variants(paths: list[str]) -> dict:
    """One thread each: decode-then-crop vs decoding only the window, and a full decode vs a 1/2-scale decode
    before resizing to :data:`SMALL`."""
    import parafeed as pf

    jpegs = _jpegs(paths)
    y, x, h, w = CROP

    def each(fn):
        return lambda: sum(1 for j in jpegs if fn(j) is not None)

    return {
        "parafeed decode_jpeg, then crop": each(lambda j: pf.image.decode_jpeg(j, channels=3)[y : y + h, x : x + w]),
        "parafeed decode_and_crop_jpeg": each(lambda j: pf.image.decode_and_crop_jpeg(j, CROP, channels=3)),
        "parafeed decode_jpeg + resize 112": each(
            lambda j: pf.image.resize(pf.image.decode_jpeg(j, channels=3), SMALL)
        ),
        "parafeed decode_jpeg(min_size=112) + resize 112": each(
            lambda j: pf.image.resize(pf.image.decode_jpeg(j, channels=3, min_size=SMALL), SMALL)
        ),
    }


def tf_jpeg_variants(paths: list[str]) -> dict:
    """The same in tf.data, on one thread as in parafeed's rows: a serial map over the JPEG bytes, with a private
    thread pool of 1 and no map-and-batch fusion (which would otherwise run the map on ~1.7 cores here)."""
    try:
        import tensorflow as tf
    except ImportError:
        return _missing("tensorflow")
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.experimental_optimization.map_and_batch_fusion = False
    jpegs = tf.data.Dataset.from_tensor_slices(_jpegs(paths))

    def each(fn):
        ds = jpegs.map(fn).batch(256).with_options(options)
        return lambda: int(ds.reduce(0, lambda n, b: n + tf.shape(b)[0]))

    return {
        "tf.image.decode_and_crop_jpeg": each(lambda j: tf.image.decode_and_crop_jpeg(j, CROP, channels=3)),
        "tf decode_jpeg + resize 112": each(lambda j: tf.image.resize(tf.io.decode_jpeg(j, channels=3), SMALL)),
        "tf decode_jpeg(ratio=2) + resize 112": each(
            lambda j: tf.image.resize(tf.io.decode_jpeg(j, channels=3, ratio=2), SMALL)
        ),
    }


def jpeg_variant_differences(paths: list[str], count: int = 200) -> dict[str, float]:
    """parafeed's outputs against tf.image's over the first ``count`` photos: the largest difference of the cropped
    decode (0: bit-exact) and of the 1/2-scale decode + resize (against tf's ratio=2 decode + resize), and the mean
    difference of the latter from tf's full decode + resize (decoding at a reduced scale is not bit-exact)."""
    import tensorflow as tf

    import parafeed as pf

    crop, same_scale, full = 0, 0.0, []
    for j in _jpegs(paths)[:count]:
        ours = pf.image.decode_and_crop_jpeg(j, CROP, channels=3).astype(int)
        crop = max(crop, int(np.abs(ours - tf.image.decode_and_crop_jpeg(j, CROP, channels=3).numpy()).max()))
        small = pf.image.resize(pf.image.decode_jpeg(j, channels=3, min_size=SMALL), SMALL)
        halved = tf.image.resize(tf.io.decode_jpeg(j, channels=3, ratio=2), SMALL).numpy()
        same_scale = max(same_scale, float(np.abs(small - halved).max()))
        full.append(float(np.abs(small - tf.image.resize(tf.io.decode_jpeg(j, channels=3), SMALL).numpy()).mean()))
    return {"crop max": crop, "reduced max vs ratio=2": same_scale, "reduced mean vs full": float(np.mean(full))}

"""Synthetic input files for the porting corpus (tests/porting/corpus/), written with TensorFlow.

Every corpus module names the writer it needs in its module-level ``DATA`` string; ``write(name, directory)`` (or
``WRITERS[name](directory)``) writes that writer's files into ``directory`` and returns ``directory``. The files are small
(a few records each, images of about 40x50 pixels unless the source code fixes a size) and deterministic: the same bytes
on every run.

The file names and feature keys are the ones the real input functions expect (ImageNet-style ``image/...`` keys, BERT
``input_ids``..., COCO-style detection keys, ...); each writer's docstring lists what it writes.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

IMAGE_HEIGHT = 40
IMAGE_WIDTH = 50

# BERT-style records: sequence length and number of masked positions (the corpus builds pass the same numbers).
SEQ_LENGTH = 16
MAX_PREDICTIONS = 4


# --------------------------------------------------------------------------------------------------------------------
# small helpers


def _bytes(values):
    if not isinstance(values, (list, tuple)):
        values = [values]
    return tf.train.Feature(
        bytes_list=tf.train.BytesList(value=[v.encode() if isinstance(v, str) else v for v in values])
    )


def _ints(values):
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = [values]
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))


def _floats(values):
    if not isinstance(values, (list, tuple, np.ndarray)):
        values = [values]
    return tf.train.Feature(float_list=tf.train.FloatList(value=[float(v) for v in values]))


def _example(features: dict) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _write_records(path: str, records) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)


def _image(index: int, height: int = IMAGE_HEIGHT, width: int = IMAGE_WIDTH, channels: int = 3) -> np.ndarray:
    """A deterministic smooth pattern (JPEG-friendly), different for each index."""
    y = np.arange(height, dtype=np.float32)[:, None, None]
    x = np.arange(width, dtype=np.float32)[None, :, None]
    c = np.arange(channels, dtype=np.float32)[None, None, :]
    pattern = 127.5 + 100.0 * np.sin((x * (index + 1) + y * 2.0) / 9.0 + c)
    return np.clip(pattern, 0, 255).astype(np.uint8)


def _jpeg(index: int, height: int = IMAGE_HEIGHT, width: int = IMAGE_WIDTH) -> bytes:
    return tf.io.encode_jpeg(_image(index, height, width), quality=90).numpy()


def _png(index: int, height: int = IMAGE_HEIGHT, width: int = IMAGE_WIDTH, channels: int = 3) -> bytes:
    return tf.io.encode_png(_image(index, height, width, channels)).numpy()


def _write_file(path: str, data: bytes | str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    tf.io.write_file(path, data)


# --------------------------------------------------------------------------------------------------------------------
# writers


def write_imagenet(directory: str) -> str:
    """ImageNet-style tf.Examples (the layout of tensorflow/models' and tensorflow/tpu's build_imagenet_data.py).

    Files: ``train-00000-of-00002``, ``train-00001-of-00002``, ``validation-00000-of-00001`` (3 records each).
    Keys: image/encoded (JPEG 40x50), image/format, image/height, image/width, image/channels, image/colorspace,
    image/filename, image/class/label (1..5), image/class/synset, image/class/text, image/object/bbox/{xmin,ymin,xmax,
    ymax} (one box), image/object/bbox/label.
    """
    files = ["train-00000-of-00002", "train-00001-of-00002", "validation-00000-of-00001"]
    index = 0
    for name in files:
        records = []
        for _ in range(3):
            label = index % 5 + 1
            records.append(
                _example(
                    {
                        "image/encoded": _bytes(_jpeg(index)),
                        "image/format": _bytes("JPEG"),
                        "image/height": _ints(IMAGE_HEIGHT),
                        "image/width": _ints(IMAGE_WIDTH),
                        "image/channels": _ints(3),
                        "image/colorspace": _bytes("RGB"),
                        "image/filename": _bytes(f"image_{index:05d}.JPEG"),
                        "image/class/label": _ints(label),
                        "image/class/synset": _bytes(f"n0000000{label}"),
                        "image/class/text": _bytes(f"class {label}"),
                        "image/object/bbox/xmin": _floats(0.1),
                        "image/object/bbox/ymin": _floats(0.2),
                        "image/object/bbox/xmax": _floats(0.8),
                        "image/object/bbox/ymax": _floats(0.9),
                        "image/object/bbox/label": _ints(label),
                    }
                )
            )
            index += 1
        _write_records(os.path.join(directory, name), records)
    return directory


def write_coco(directory: str) -> str:
    """COCO-style detection tf.Examples (the layout of create_coco_tfrecord.py).

    File: ``coco-00000-of-00001.tfrecord`` (3 records; the second has no objects, the third no source_id).
    Keys: image/encoded (JPEG 40x50), image/format, image/filename, image/source_id, image/height, image/width,
    image/object/bbox/{xmin,xmax,ymin,ymax}, image/object/class/label, image/object/class/text, image/object/area,
    image/object/is_crowd, image/object/mask (PNG 40x50 masks, one a box).
    """
    records = []
    for index, n_objects in enumerate((2, 0, 1)):
        boxes = [(0.1 + 0.1 * k, 0.2, 0.6 + 0.1 * k, 0.7) for k in range(n_objects)]  # ymin, xmin, ymax, xmax
        masks = []
        for ymin, xmin, ymax, xmax in boxes:
            mask = np.zeros((IMAGE_HEIGHT, IMAGE_WIDTH, 1), np.uint8)
            mask[
                int(ymin * IMAGE_HEIGHT) : int(ymax * IMAGE_HEIGHT), int(xmin * IMAGE_WIDTH) : int(xmax * IMAGE_WIDTH)
            ] = 1
            masks.append(tf.io.encode_png(mask).numpy())
        features = {
            "image/encoded": _bytes(_jpeg(10 + index)),
            "image/format": _bytes("jpeg"),
            "image/filename": _bytes(f"{index:012d}.jpg"),
            "image/height": _ints(IMAGE_HEIGHT),
            "image/width": _ints(IMAGE_WIDTH),
            "image/object/bbox/ymin": _floats([b[0] for b in boxes]),
            "image/object/bbox/xmin": _floats([b[1] for b in boxes]),
            "image/object/bbox/ymax": _floats([b[2] for b in boxes]),
            "image/object/bbox/xmax": _floats([b[3] for b in boxes]),
            "image/object/class/label": _ints([k + 1 for k in range(n_objects)]),
            "image/object/class/text": _bytes([f"class{k + 1}" for k in range(n_objects)]),
            "image/object/area": _floats([(b[2] - b[0]) * (b[3] - b[1]) * IMAGE_HEIGHT * IMAGE_WIDTH for b in boxes]),
            "image/object/is_crowd": _ints([0] * n_objects),
            "image/object/mask": _bytes(masks),
        }
        if index != 2:
            features["image/source_id"] = _bytes(str(1000 + index))
        records.append(_example(features))
    _write_records(os.path.join(directory, "coco-00000-of-00001.tfrecord"), records)
    return directory


def write_bert(directory: str) -> str:
    """BERT-style feature records (the outputs of create_pretraining_data.py and the fine-tuning data scripts).

    Files (sequence length SEQ_LENGTH=16, MAX_PREDICTIONS=4 masked positions):
    ``pretrain-00000.tfrecord``, ``pretrain-00001.tfrecord`` (4 records each): input_ids, input_mask, segment_ids,
    masked_lm_positions, masked_lm_ids, masked_lm_weights (float), next_sentence_labels.
    ``classifier_train.tf_record`` (5 records): input_ids, input_mask, segment_ids, label_ids, is_real_example, weight,
    example_id.
    ``squad_train.tf_record`` (5 records): unique_ids, input_ids, input_mask, segment_ids, start_positions,
    end_positions, is_impossible.
    ``mlm/train-00000-4.tfrecord``, ``mlm/train-00001-4.tfrecord`` (4 records each; the sample count is in the name, as
    the Hugging Face prepare_tfrecord_shards.py writes them): input_ids (CLS 101 ... SEP 102), attention_mask.
    """
    rng = np.random.RandomState(0)

    def sequence():
        n = int(rng.randint(6, SEQ_LENGTH + 1))
        ids = np.zeros(SEQ_LENGTH, np.int64)
        ids[:n] = rng.randint(5, 100, n)
        ids[0] = 101
        mask = (np.arange(SEQ_LENGTH) < n).astype(np.int64)
        segments = ((np.arange(SEQ_LENGTH) >= n // 2) & (mask == 1)).astype(np.int64)
        return ids, mask, segments

    for shard in range(2):
        records = []
        for _ in range(4):
            ids, mask, segments = sequence()
            positions = np.sort(
                rng.choice(np.arange(1, int(mask.sum())), size=min(MAX_PREDICTIONS, int(mask.sum()) - 1), replace=False)
            )
            n_masked = len(positions)
            masked_positions = np.zeros(MAX_PREDICTIONS, np.int64)
            masked_positions[:n_masked] = positions
            masked_ids = np.zeros(MAX_PREDICTIONS, np.int64)
            masked_ids[:n_masked] = ids[positions]
            weights = (np.arange(MAX_PREDICTIONS) < n_masked).astype(np.float32)
            records.append(
                _example(
                    {
                        "input_ids": _ints(ids),
                        "input_mask": _ints(mask),
                        "segment_ids": _ints(segments),
                        "masked_lm_positions": _ints(masked_positions),
                        "masked_lm_ids": _ints(masked_ids),
                        "masked_lm_weights": _floats(weights),
                        "next_sentence_labels": _ints(int(rng.randint(0, 2))),
                    }
                )
            )
        _write_records(os.path.join(directory, f"pretrain-{shard:05d}.tfrecord"), records)

    records = []
    for _ in range(5):
        ids, mask, segments = sequence()
        records.append(
            _example(
                {
                    "input_ids": _ints(ids),
                    "input_mask": _ints(mask),
                    "segment_ids": _ints(segments),
                    "label_ids": _ints(int(rng.randint(0, 3))),
                    "is_real_example": _ints(1),
                    "weight": _floats(1.0),
                    "example_id": _ints(len(records)),
                }
            )
        )
    _write_records(os.path.join(directory, "classifier_train.tf_record"), records)

    records = []
    for k in range(5):
        ids, mask, segments = sequence()
        start = int(rng.randint(1, 4))
        records.append(
            _example(
                {
                    "unique_ids": _ints(1000000000 + k),
                    "input_ids": _ints(ids),
                    "input_mask": _ints(mask),
                    "segment_ids": _ints(segments),
                    "start_positions": _ints(start),
                    "end_positions": _ints(start + 1),
                    "is_impossible": _ints(0),
                }
            )
        )
    _write_records(os.path.join(directory, "squad_train.tf_record"), records)

    for shard in range(2):
        records = []
        for _ in range(4):
            ids, mask, _ = sequence()
            ids[int(mask.sum()) - 1] = 102
            records.append(_example({"input_ids": _ints(ids), "attention_mask": _ints(mask)}))
        _write_records(os.path.join(directory, "mlm", f"train-{shard:05d}-4.tfrecord"), records)
    return directory


def write_translation(directory: str) -> str:
    """Token-id translation pairs (the layout of tensorflow/models' transformer data_download.py).

    Files: ``translate_ende-train-00000-of-00002``, ``translate_ende-train-00001-of-00002`` (6 records each),
    ``translate_ende-dev-00000-of-00001`` (4 records). Keys: inputs, targets (variable-length int64 token ids ending in
    EOS=1, lengths 2..12); the same ids are also stored under de (= inputs) and en (= targets).
    """
    rng = np.random.RandomState(1)
    for name, count in (
        ("translate_ende-train-00000-of-00002", 6),
        ("translate_ende-train-00001-of-00002", 6),
        ("translate_ende-dev-00000-of-00001", 4),
    ):
        records = []
        for _ in range(count):
            inputs = [*rng.randint(2, 50, int(rng.randint(1, 12))), 1]
            targets = [*rng.randint(2, 50, int(rng.randint(1, 12))), 1]
            records.append(
                _example(
                    {"inputs": _ints(inputs), "targets": _ints(targets), "de": _ints(inputs), "en": _ints(targets)}
                )
            )
        _write_records(os.path.join(directory, name), records)
    return directory


def write_image_dir(directory: str) -> str:
    """JPEG files in one folder per class (the layout of the flower_photos archive).

    ``flower_photos/{daisy,roses,tulips}/image_<k>.jpg`` (2 per class, 40x50), ``flower_photos/LICENSE.txt`` and
    ``flower_classes.txt`` (the class names, one a line).
    """
    root = os.path.join(directory, "flower_photos")
    index = 0
    for name in ("daisy", "roses", "tulips"):
        for k in range(2):
            _write_file(os.path.join(root, name, f"image_{k}.jpg"), _jpeg(20 + index))
            index += 1
    _write_file(os.path.join(root, "LICENSE.txt"), "synthetic images\n")
    _write_file(os.path.join(directory, "flower_classes.txt"), "daisy\nroses\ntulips\n")
    return directory


def write_pix2pix(directory: str) -> str:
    """Side-by-side image pairs (the layout of the pix2pix facades dataset): ``train/<k>.jpg`` (3) and
    ``test/<k>.jpg`` (2), each 40x100 (the real image on the left half, the input on the right half)."""
    for split, count in (("train", 3), ("test", 2)):
        for k in range(count):
            _write_file(os.path.join(directory, split, f"{k}.jpg"), _jpeg(40 + k, IMAGE_HEIGHT, 2 * IMAGE_WIDTH))
    return directory


def write_text(directory: str) -> str:
    """Text and CSV files.

    ``cowper.txt``, ``derby.txt``, ``butler.txt`` (4 lines each, the text-loading tutorial's Iliad translations);
    ``titanic/train.csv`` (header + 8 rows: survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone);
    ``creditcard.csv`` (header Time,V1..V28,Amount,Class; 12 rows, 3 of class 1);
    ``fonts/AGENCY.csv``, ``fonts/ARIAL.csv`` (the UCI fonts layout: font,fontVariant,m_label,strength,italic,
    orientation,m_top,m_left,originalH,originalW,h,w,r0c0..r19c19; 3 rows each);
    ``missing.csv`` (4 float columns with missing values, no header).
    """
    iliad = {
        "cowper.txt": [
            "Achilles sing, O Goddess! Peleus' son;",
            "His wrath pernicious, who ten thousand woes",
            "Caused to Achaia's host, sent many a soul",
            "Illustrious into Ades premature,",
        ],
        "derby.txt": [
            "Of Peleus' son, Achilles, sing, O Muse,",
            "The vengeance, deep and deadly; whence to Greece",
            "Unnumbered ills arose; which many a soul",
            "Of mighty warriors to the viewless shades",
        ],
        "butler.txt": [
            "Sing, O goddess, the anger of Achilles son of Peleus, that brought",
            "countless ills upon the Achaeans. Many a brave soul did it send",
            "hurrying down to Hades, and many a hero did it yield a prey to dogs",
            "and vultures, for so were the counsels of Jove fulfilled from the day on",
        ],
    }
    for name, lines in iliad.items():
        _write_file(os.path.join(directory, name), "\n".join(lines) + "\n")

    titanic = [
        "survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone",
        "0,male,22.0,1,0,7.25,Third,unknown,Southampton,n",
        "1,female,38.0,1,0,71.2833,First,C,Cherbourg,n",
        "1,female,26.0,0,0,7.925,Third,unknown,Southampton,y",
        "1,female,35.0,1,0,53.1,First,C,Southampton,n",
        "0,male,28.0,0,0,8.4583,Third,unknown,Queenstown,y",
        "0,male,2.0,3,1,21.075,Third,unknown,Southampton,n",
        "1,female,27.0,0,2,11.1333,Third,unknown,Southampton,n",
        "1,female,14.0,1,0,30.0708,Second,unknown,Cherbourg,n",
    ]
    _write_file(os.path.join(directory, "titanic", "train.csv"), "\n".join(titanic) + "\n")

    rng = np.random.RandomState(2)
    header = ["Time"] + [f"V{k}" for k in range(1, 29)] + ["Amount", "Class"]
    rows = [",".join(header)]
    for k in range(12):
        values = [float(k)] + [round(float(v), 4) for v in rng.randn(28)] + [round(float(rng.rand() * 100), 2)]
        rows.append(",".join(str(v) for v in values) + f",{1 if k % 4 == 0 else 0}")
    _write_file(os.path.join(directory, "creditcard.csv"), "\n".join(rows) + "\n")

    header = ["font", "fontVariant", "m_label", "strength", "italic", "orientation", "m_top", "m_left", "originalH",
              "originalW", "h", "w"] + [f"r{r}c{c}" for r in range(20) for c in range(20)]  # fmt: skip
    for font in ("AGENCY", "ARIAL"):
        rows = [",".join(header)]
        for k in range(3):
            pixels = [str(int(v)) for v in rng.randint(1, 256, 400)]
            rows.append(
                ",".join([font, "scanned", str(65 + k), "0.4", "0", "0.0", "35", "21", "51", "22", "20", "20", *pixels])
            )
        _write_file(os.path.join(directory, "fonts", f"{font}.csv"), "\n".join(rows) + "\n")

    _write_file(os.path.join(directory, "missing.csv"), "1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n")
    return directory


def write_audio(directory: str) -> str:
    """WAV files in one folder per command (the layout of mini_speech_commands): ``mini_speech_commands/{down,go,
    left}/<k>.wav``, 2 per command, 16 kHz mono, 12000 or 16000 samples (tf.audio.encode_wav); and the layout of the
    keras.io speaker-recognition data: ``speakers/audio/<speaker>/<k>.wav`` (2 speakers, 5 files each, 16000 samples)
    and ``speakers/noise/_background_noise_/noise.wav`` (40000 samples)."""
    for c, command in enumerate(("down", "go", "left")):
        for k in range(2):
            n = 16000 if k == 0 else 12000
            t = np.arange(n, dtype=np.float32) / 16000.0
            wave = (0.5 * np.sin(2 * np.pi * (200.0 + 100.0 * c + 50.0 * k) * t)).astype(np.float32)[:, None]
            data = tf.audio.encode_wav(wave, 16000).numpy()
            _write_file(os.path.join(directory, "mini_speech_commands", command, f"{k}.wav"), data)
    _write_file(os.path.join(directory, "mini_speech_commands", "README.md"), "synthetic\n")

    for s, speaker in enumerate(("Benjamin_Netanyau", "Jens_Stoltenberg")):
        for k in range(5):
            t = np.arange(16000, dtype=np.float32) / 16000.0
            wave = (0.4 * np.sin(2 * np.pi * (150.0 + 80.0 * s + 10.0 * k) * t)).astype(np.float32)[:, None]
            _write_file(
                os.path.join(directory, "speakers", "audio", speaker, f"{k}.wav"),
                tf.audio.encode_wav(wave, 16000).numpy(),
            )
    noise = (0.1 * np.sin(np.arange(40000, dtype=np.float32) * 0.37)).astype(np.float32)[:, None]
    _write_file(
        os.path.join(directory, "speakers", "noise", "_background_noise_", "noise.wav"),
        tf.audio.encode_wav(noise, 16000).numpy(),
    )
    return directory


def write_docs_tfrecord(directory: str) -> str:
    """The TFRecord files of the TensorFlow tfrecord tutorial and data guide.

    ``test.tfrecord`` (6 records: feature0 int64 (bool), feature1 int64, feature2 bytes, feature3 float);
    ``images.tfrecords`` (2 records: height, width, depth, label, image_raw (JPEG 40x50));
    ``fsns.tfrec`` (3 records: image/encoded (PNG 40x50), image/text).
    """
    strings = [b"cat", b"dog", b"chicken", b"horse", b"goat"]
    records = []
    for k in range(6):
        records.append(
            _example(
                {
                    "feature0": _ints(k % 2),
                    "feature1": _ints(k % 5),
                    "feature2": _bytes(strings[k % 5]),
                    "feature3": _floats(0.5 * k - 1.0),
                }
            )
        )
    _write_records(os.path.join(directory, "test.tfrecord"), records)
    records = []
    for k in range(2):
        records.append(
            _example(
                {
                    "height": _ints(IMAGE_HEIGHT),
                    "width": _ints(IMAGE_WIDTH),
                    "depth": _ints(3),
                    "label": _ints(k),
                    "image_raw": _bytes(_jpeg(60 + k)),
                }
            )
        )
    _write_records(os.path.join(directory, "images.tfrecords"), records)
    records = [_example({"image/encoded": _bytes(_png(70 + k)), "image/text": _bytes(f"Rue {k}")}) for k in range(3)]
    _write_records(os.path.join(directory, "fsns.tfrec"), records)
    return directory


def write_kerasio(directory: str) -> str:
    """The TFRecord files of two keras.io recipes.

    ``tfrecords/train00-2.tfrec`` (2 records: image (JPEG 1024x1024, the size tfrecord.py reshapes to), target);
    ``tfrecords/file_00-3.tfrec`` (3 records: image (JPEG 40x50), path, area, bbox (4 floats), category_id, id,
    image_id; creating_tfrecords.py's layout).
    """
    records = [_example({"image": _bytes(_jpeg(80 + k, 1024, 1024)), "target": _ints(k % 2)}) for k in range(2)]
    _write_records(os.path.join(directory, "tfrecords", "train00-2.tfrec"), records)
    records = []
    for k in range(3):
        records.append(
            _example(
                {
                    "image": _bytes(_jpeg(90 + k)),
                    "path": _bytes(f"datasets/val2017/{k:012d}.jpg"),
                    "area": _floats(120.5 + k),
                    "bbox": _floats([1.0 + k, 2.0, 10.0, 12.0]),
                    "category_id": _ints(k + 1),
                    "id": _ints(500 + k),
                    "image_id": _ints(k),
                }
            )
        )
    _write_records(os.path.join(directory, "tfrecords", "file_00-3.tfrec"), records)
    return directory


def write_cifar(directory: str) -> str:
    """CIFAR-style records: ``cifar-00000-of-00001.tfrecord`` (4 records: image (PNG 32x32x3), label)."""
    records = [_example({"image": _bytes(_png(100 + k, 32, 32)), "label": _ints(k % 10)}) for k in range(4)]
    _write_records(os.path.join(directory, "cifar-00000-of-00001.tfrecord"), records)
    return directory


def write_t5_text(directory: str) -> str:
    """Text tf.Examples in the feature layout of the TFDS datasets T5 reads.

    ``squad.tfrecord`` (3 records: id, title, context, question, answers/text (1-2 strings), answers/answer_start);
    ``cnn_dailymail.tfrecord`` (2 records: article, highlights);
    ``c4.tfrecord`` (3 records: text (multi-sentence, multi-line; one Japanese line), url).
    """
    squad = [
        (
            "q0",
            "Paris",
            "Paris is the capital of France. It has 2.1 million people.",
            "What is the capital of France?",
            ["Paris"],
            [0],
        ),
        (
            "q1",
            "Rivers",
            "The Nile is a major north-flowing river in Africa.",
            "Where does the Nile flow?",
            ["north", "north-flowing"],
            [26, 26],
        ),
        (
            "q2",
            "Oxygen",
            "Oxygen is the chemical element with symbol O and atomic number 8.",
            "What is the atomic number of oxygen?",
            ["8"],
            [64],
        ),
    ]
    records = []
    for qid, title, context, question, answers, starts in squad:
        records.append(
            _example(
                {
                    "id": _bytes(qid),
                    "title": _bytes(title),
                    "context": _bytes(context),
                    "question": _bytes(question),
                    "answers/text": _bytes(answers),
                    "answers/answer_start": _ints(starts),
                }
            )
        )
    _write_records(os.path.join(directory, "squad.tfrecord"), records)
    records = [
        _example(
            {
                "article": _bytes("The cat sat on the mat. It was a sunny day in the park."),
                "highlights": _bytes("Cat sits on mat."),
            }
        ),
        _example(
            {"article": _bytes("Stocks rose sharply on Monday after the report."), "highlights": _bytes("Stocks rose.")}
        ),
    ]
    _write_records(os.path.join(directory, "cnn_dailymail.tfrecord"), records)
    texts = [
        "The quick brown fox jumps over the lazy dog. It barked! Then it slept?\nA second line here. And more words to read.",
        "Machine learning models learn from data and improve with experience over time in many settings.\n\n一二三四五。",
        "Short text with exactly nine words in this line.",
    ]
    records = [_example({"text": _bytes(t), "url": _bytes(f"http://example.com/{k}")}) for k, t in enumerate(texts)]
    _write_records(os.path.join(directory, "c4.tfrecord"), records)
    return directory


def write_recsys(directory: str) -> str:
    """Recommendation records.

    ``sim/train/part_0.tfrecord`` (NVIDIA SIM layout, 6 records): user_id, item_id, cat_id (target item),
    item_id_pos, cat_id_pos, item_id_neg, cat_id_neg (history of length 10, zero-padded), label.
    ``movielens/train.tfrecord`` (tensorflow/examples on-device recommendation layout, 4 records): context_movie_id
    (int64 x10), context_movie_rating (float x10), context_movie_genre (bytes x8; "Western" is not in the vocabulary), label_movie_id (int64 x1).
    ``movielens/movie_genre_vocab.txt``: the genre vocabulary.
    """
    rng = np.random.RandomState(3)
    records = []
    for k in range(6):
        n = int(rng.randint(2, 11))
        history = np.zeros(10, np.int64)
        history[:n] = rng.randint(1, 100, n)
        categories = np.where(history > 0, history % 7 + 1, 0)
        negative = np.where(history > 0, rng.randint(1, 100, 10), 0)
        records.append(
            _example(
                {
                    "user_id": _ints(k + 1),
                    "item_id": _ints(int(rng.randint(1, 100))),
                    "cat_id": _ints(int(rng.randint(1, 8))),
                    "item_id_pos": _ints(history),
                    "cat_id_pos": _ints(categories),
                    "item_id_neg": _ints(negative),
                    "cat_id_neg": _ints(np.where(negative > 0, negative % 7 + 1, 0)),
                    "label": _ints(k % 2),
                }
            )
        )
    _write_records(os.path.join(directory, "sim", "train", "part_0.tfrecord"), records)

    genres = ["Action", "Comedy", "Drama", "Horror", "Romance"]
    records = []
    for _ in range(4):
        records.append(
            _example(
                {
                    "context_movie_id": _ints(rng.randint(1, 50, 10)),
                    "context_movie_rating": _floats(rng.randint(1, 6, 10).astype(np.float32)),
                    "context_movie_genre": _bytes(
                        [genres[int(i) % 5] if i < 6 else "Western" for i in rng.randint(0, 7, 8)]
                    ),
                    "label_movie_id": _ints(int(rng.randint(1, 50))),
                }
            )
        )
    _write_records(os.path.join(directory, "movielens", "train.tfrecord"), records)
    _write_file(os.path.join(directory, "movielens", "movie_genre_vocab.txt"), "\n".join(genres) + "\n")
    return directory


def write_segmentation(directory: str) -> str:
    """Images and label masks in the layout of the CIHP (instance-level human parsing) dataset:
    ``Training/Images/<k>.jpg`` (8, 40x50 JPEG) and ``Training/Category_ids/<k>.png`` (8, 40x50 one-channel PNG with
    class ids 0..19)."""
    for k in range(8):
        _write_file(os.path.join(directory, "Training", "Images", f"{k:07d}.jpg"), _jpeg(110 + k))
        mask = ((np.arange(IMAGE_HEIGHT)[:, None] // 8 + np.arange(IMAGE_WIDTH)[None, :] // 10 + k) % 20).astype(
            np.uint8
        )
        _write_file(
            os.path.join(directory, "Training", "Category_ids", f"{k:07d}.png"),
            tf.io.encode_png(mask[:, :, None]).numpy(),
        )
    return directory


def write_none(directory: str) -> str:
    """No files (the entry builds its dataset from ranges or tensors)."""
    return directory


WRITERS = {
    "imagenet": write_imagenet,
    "coco": write_coco,
    "bert": write_bert,
    "translation": write_translation,
    "image_dir": write_image_dir,
    "pix2pix": write_pix2pix,
    "text": write_text,
    "audio": write_audio,
    "docs_tfrecord": write_docs_tfrecord,
    "kerasio": write_kerasio,
    "cifar": write_cifar,
    "t5_text": write_t5_text,
    "recsys": write_recsys,
    "segmentation": write_segmentation,
    "none": write_none,
}


def write(name: str, directory: str) -> str:
    """Write writer ``name``'s files into ``directory`` (created if missing) and return ``directory``."""
    os.makedirs(directory, exist_ok=True)
    return WRITERS[name](directory)

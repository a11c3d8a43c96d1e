"""Hugging Face Transformers TF example "language-modeling-tpu": MLM TFRecord pipeline (assert_cardinality, masking map
on batches).

Repository: https://github.com/huggingface/transformers
Path: examples/tensorflow/language-modeling-tpu/run_mlm.py
Commit: 15ea02a2add1672acbeee158a9448720d6093de1
Path: examples/tensorflow/language-modeling-tpu/run_mlm.py (decode_fn and mask_with_collator, nested in main())
Commit: 15ea02a2add1672acbeee158a9448720d6093de1
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): AUTO, count_samples, prepare_dataset, decode_fn,
mask_with_collator
Changes from the original:
  - decode_fn and mask_with_collator are closures defined inside main(); they are kept verbatim but dedented to module
    level, where the names they close over (args, tokenizer, data_collator) are module-level stubs
  - `args` (the argparse namespace, also read as a global by prepare_dataset) is a stub namespace (max_length=16,
    shuffle_buffer_size=8, mlm_probability=0.15)
  - `tokenizer` (a transformers AutoTokenizer) is a stub with cls_token_id=101, sep_token_id=102, mask_token_id=103
    and len() == 1000
  - `data_collator` (transformers.DataCollatorForLanguageModeling) is a stub whose tf_mask_tokens(inputs, vocab_size,
    mask_token_id, special_tokens_mask) masks every 4th non-special token with TF ops (the original masks 15% at
    random, 80/10/10); its construction in main() is left out
Harness notes:
  - the eval dataset (shuffle=False) is concatenated with the train dataset (shuffle=True; tf.random.set_seed fixes
    its file and record shuffles), both batch 2 with drop_remainder.
"""
import tensorflow as tf
import os
import re

DATA = "bert"
DETERMINISTIC = True

# --- stubs (not from the source; listed under "Changes from the original") ---
import types as _types

args = _types.SimpleNamespace(max_length=16, shuffle_buffer_size=8, mlm_probability=0.15)


class _TokenizerStub:
  cls_token_id = 101
  sep_token_id = 102
  mask_token_id = 103

  def __len__(self):
    return 1000


tokenizer = _TokenizerStub()


def _tf_mask_tokens_stub(inputs, vocab_size, mask_token_id, special_tokens_mask=None):
  positions = tf.range(tf.shape(inputs)[-1])[None, :]
  masked = tf.logical_and(positions % 4 == 1, tf.logical_not(special_tokens_mask))
  labels = tf.where(masked, inputs, -100)
  return tf.where(masked, tf.cast(mask_token_id, inputs.dtype), inputs), labels


data_collator = _types.SimpleNamespace(tf_mask_tokens=_tf_mask_tokens_stub)
# --- end of stubs ---


# >>> verbatim: huggingface/transformers/examples/tensorflow/language-modeling-tpu/run_mlm.py @ 15ea02a2add1
AUTO = tf.data.AUTOTUNE


def count_samples(file_list):
    num_samples = 0
    for file in file_list:
        filename = file.split("/")[-1]
        sample_count = re.search(r"-\d+-(\d+)\.tfrecord", filename).group(1)
        sample_count = int(sample_count)
        num_samples += sample_count

    return num_samples


def prepare_dataset(
    records, decode_fn, mask_fn, batch_size, shuffle, shuffle_buffer_size=None
):
    num_samples = count_samples(records)
    dataset = tf.data.Dataset.from_tensor_slices(records)
    if shuffle:
        dataset = dataset.shuffle(len(dataset))
    dataset = tf.data.TFRecordDataset(dataset, num_parallel_reads=AUTO)
    # TF can't infer the total sample count because it doesn't read all the records yet, so we assert it here
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_samples))
    dataset = dataset.map(decode_fn, num_parallel_calls=AUTO)
    if shuffle:
        assert shuffle_buffer_size is not None
        dataset = dataset.shuffle(args.shuffle_buffer_size)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(mask_fn, num_parallel_calls=AUTO)
    dataset = dataset.prefetch(AUTO)
    return dataset
# <<< verbatim


# >>> verbatim: huggingface/transformers/examples/tensorflow/language-modeling-tpu/run_mlm.py (decode_fn and mask_with_collator, nested in main()) @ 15ea02a2add1
def decode_fn(example):
    features = {
        "input_ids": tf.io.FixedLenFeature(
            dtype=tf.int64, shape=(args.max_length,)
        ),
        "attention_mask": tf.io.FixedLenFeature(
            dtype=tf.int64, shape=(args.max_length,)
        ),
    }
    return tf.io.parse_single_example(example, features)


def mask_with_collator(batch):
    # TF really needs an isin() function
    special_tokens_mask = (
        ~tf.cast(batch["attention_mask"], tf.bool)
        | (batch["input_ids"] == tokenizer.cls_token_id)
        | (batch["input_ids"] == tokenizer.sep_token_id)
    )
    batch["input_ids"], batch["labels"] = data_collator.tf_mask_tokens(
        batch["input_ids"],
        vocab_size=len(tokenizer),
        mask_token_id=tokenizer.mask_token_id,
        special_tokens_mask=special_tokens_mask,
    )
    return batch
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    tf.random.set_seed(0)
    records = sorted(tf.io.gfile.glob(os.path.join(data_dir, "mlm", "*.tfrecord")))
    eval_dataset = prepare_dataset(records, decode_fn=decode_fn, mask_fn=mask_with_collator, batch_size=2, shuffle=False)
    train_dataset = prepare_dataset(records, decode_fn=decode_fn, mask_fn=mask_with_collator, batch_size=2, shuffle=True,
                                    shuffle_buffer_size=8)
    return eval_dataset.concatenate(train_dataset)

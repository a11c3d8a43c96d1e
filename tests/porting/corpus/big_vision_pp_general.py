"""big_vision generic preprocessing ops (value_range, lookup table, onehot, keep/drop, pad_to_shape, reshape, ragged,
setdefault).

Repository: https://github.com/google-research/big_vision
Path: big_vision/pp/utils.py
Commit: 0127fb6b337ee2a27bf4e54dea79cff176527356
Path: big_vision/pp/ops_general.py
Commit: 0127fb6b337ee2a27bf4e54dea79cff176527356
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): maybe_repeat, InKeyOutKey, get_value_range,
get_lookup, get_onehot, get_keep, get_drop, get_squeeze_last_dim, get_concat, get_rag_tensor, get_pad_to_shape,
get_reshape, get_setdefault
Changes from the original:
  - `from big_vision.pp.registry import Registry` is replaced by a stub whose register() decorator returns the
    function unchanged
  - `from big_vision.pp import utils` is replaced by the two helpers it provides (maybe_repeat, InKeyOutKey, kept
    verbatim from big_vision/pp/utils.py) in a namespace named utils
  - the ops that need jax or big_vision.utils (copy, flatten, choice...) are left out with those imports
Harness notes:
  - the ops are mapped over {"image", "name", "extra", "empty"} dicts built by the harness from the synthetic
    flower_photos files; get_lookup reads the class names from flower_classes.txt (a tf.lookup.StaticHashTable).
"""
import tensorflow as tf
import collections
from collections import abc
import numpy as np

DATA = "image_dir"
DETERMINISTIC = True

# --- stubs (not from the source; listed under "Changes from the original") ---
import types as _types

Registry = _types.SimpleNamespace(register=lambda name: (lambda fn: fn))
# --- end of stubs ---


# >>> verbatim: google-research/big_vision/big_vision/pp/utils.py @ 0127fb6b337e
def maybe_repeat(arg, n_reps):
  if not isinstance(arg, abc.Sequence) or isinstance(arg, str):
    arg = (arg,) * n_reps
  return arg


class InKeyOutKey(object):
  """Decorator for preprocessing ops, which adds `inkey` and `outkey` arguments.

  Note: Only supports single-input single-output ops.
  """

  def __init__(self, indefault="image", outdefault="image", with_data=False):
    self.indefault = indefault
    self.outdefault = outdefault
    self.with_data = with_data

  def __call__(self, orig_get_pp_fn):

    def get_ikok_pp_fn(*args, key=None,
                       inkey=self.indefault, outkey=self.outdefault, **kw):

      orig_pp_fn = orig_get_pp_fn(*args, **kw)
      def _ikok_pp_fn(data):
        # Optionally allow the function to get the full data dict as aux input.
        if self.with_data:
          data[key or outkey] = orig_pp_fn(data[key or inkey], data=data)
        else:
          data[key or outkey] = orig_pp_fn(data[key or inkey])
        return data

      return _ikok_pp_fn

    return get_ikok_pp_fn
# <<< verbatim


# --- stubs (not from the source; listed under "Changes from the original") ---
utils = _types.SimpleNamespace(maybe_repeat=maybe_repeat, InKeyOutKey=InKeyOutKey)
# --- end of stubs ---


# >>> verbatim: google-research/big_vision/big_vision/pp/ops_general.py @ 0127fb6b337e
@Registry.register("preprocess_ops.value_range")
@utils.InKeyOutKey()
def get_value_range(vmin=-1, vmax=1, in_min=0, in_max=255.0, clip_values=False):
  """Transforms a [in_min,in_max] image to [vmin,vmax] range.

  Input ranges in_min/in_max can be equal-size lists to rescale the invidudal
  channels independently.

  Args:
    vmin: A scalar. Output max value.
    vmax: A scalar. Output min value.
    in_min: A scalar or a list of input min values to scale. If a list, the
      length should match to the number of channels in the image.
    in_max: A scalar or a list of input max values to scale. If a list, the
      length should match to the number of channels in the image.
    clip_values: Whether to clip the output values to the provided ranges.

  Returns:
    A function to rescale the values.
  """

  def _value_range(image):
    """Scales values in given range."""
    in_min_t = tf.constant(in_min, tf.float32)
    in_max_t = tf.constant(in_max, tf.float32)
    image = tf.cast(image, tf.float32)
    image = (image - in_min_t) / (in_max_t - in_min_t)
    image = vmin + image * (vmax - vmin)
    if clip_values:
      image = tf.clip_by_value(image, vmin, vmax)
    return image

  return _value_range


@Registry.register("preprocess_ops.lookup")
@utils.InKeyOutKey()
def get_lookup(mapping, npzkey="fnames", sep=None):
  """Map string to number."""

  # For NumPy files, we use the `npzkey` array in that file as the list of
  # strings which are mapped to their index in that array.
  # This is especially useful when other data (eg precomputed predictions)
  # goes along with this mapping, to have everything in one place (the npz).
  if mapping.endswith(".npz"):
    with tf.io.gfile.GFile(mapping, "rb") as f:
      keys = np.array(np.load(f, allow_pickle=False)[npzkey])
    vals = np.arange(len(keys))

  # Otherwise, we simply use the file as a text file, with either of:
  # - a string per line, mapped to its line-number
  # - a pair, separated by `sep` per line, first value being the string, second
  #   value being the integer that the string is mapped to.
  else:
    with tf.io.gfile.GFile(mapping, "r") as f:
      buf = f.read()
    if sep is None:  # values are the line numbers
      keys = buf.splitlines()
      vals = np.arange(len(keys))
    else:  # each line is key<sep>val, also make val int
      keys, vals = zip(*[l.split(sep) for l in buf.splitlines()])
      vals = [int(v) for v in vals]

  def _do_the_mapping(needle):
    """Map string to number."""
    with tf.init_scope():  # (Originally added for performance reasons.)
      table = tf.lookup.StaticHashTable(
          tf.lookup.KeyValueTensorInitializer(keys, vals), -1)
    return table.lookup(needle)

  return _do_the_mapping


@Registry.register("preprocess_ops.onehot")
def get_onehot(depth,
               key="labels",
               key_result=None,
               multi=True,
               on=1.0,
               off=0.0):
  """One-hot encodes the input.

  Args:
    depth: Length of the one-hot vector (how many classes).
    key: Key of the data to be one-hot encoded.
    key_result: Key under which to store the result (same as `key` if None).
    multi: If there are multiple labels, whether to merge them into the same
      "multi-hot" vector (True) or keep them as an extra dimension (False).
    on: Value to fill in for the positive label (default: 1).
    off: Value to fill in for negative labels (default: 0).

  Returns:
    Data dictionary.
  """

  def _onehot(data):
  # When there's more than one label, this is significantly more efficient
    # than using tf.one_hot followed by tf.reduce_max; we tested.
    labels = data[key]
    labels = tf.cast(labels, tf.int64)  # both scatter and one_hot expect this
    if labels.shape.rank > 0 and multi:
      x = tf.scatter_nd(labels[:, None], tf.ones(tf.shape(labels)[0]), (depth,))
      x = tf.clip_by_value(x, 0, 1) * (on - off) + off
    else:
      x = tf.one_hot(labels, depth, on_value=on, off_value=off)
    data[key_result or key] = x
    return data

  return _onehot


@Registry.register("preprocess_ops.keep")
def get_keep(*keys):
  """Keeps only the given keys."""

  def _keep(data):
    return {k: v for k, v in data.items() if k in keys}

  return _keep


@Registry.register("preprocess_ops.drop")
def get_drop(*keys):
  """Drops the given keys."""

  def _drop(data):
    return {k: v for k, v in data.items() if k not in keys}

  return _drop


@Registry.register("preprocess_ops.squeeze_last_dim")
@utils.InKeyOutKey()
def get_squeeze_last_dim():
  def _squeeze_last_dim(x):
    return tf.squeeze(x, axis=-1)
  return _squeeze_last_dim


@Registry.register("preprocess_ops.concat")
def get_concat(inkeys, outkey=None, axis=-1):
  """Concatenates elements along some axis."""

  def _concat(data):
    data[outkey or inkeys[0]] = tf.concat([data[k] for k in inkeys], axis)
    return data

  return _concat


@Registry.register("preprocess_ops.rag_tensor")
@utils.InKeyOutKey()
def get_rag_tensor():
  """Converts the specified feature to ragged tensor."""

  def rag_tensor(raw_tensor):
    # Note: Add one more dimension as `from_tensor` requires at least rank 2.
    return tf.RaggedTensor.from_tensor(raw_tensor[None])

  return rag_tensor


@Registry.register("preprocess_ops.pad_to_shape")
@utils.InKeyOutKey()
def get_pad_to_shape(shape, pad_value=0, where="after"):
  """Pads tensor to specified `shape`."""

  def _pads(cur, tgt):
    if tgt is None:
      return [0, 0]
    diff = tgt - cur
    return {
        "before": [diff, 0],
        "after": [0, diff],
        "both": [diff // 2, diff - diff // 2],
    }[where]

  def _pad_to_shape(x):
    assert len(x.shape.as_list()) == len(shape)
    paddings = [_pads(tgt=shape[i], cur=tf.shape(x)[i])
                for i in range(len(shape))]
    constant_value = tf.constant(pad_value, x.dtype)
    ret = tf.pad(x, paddings, constant_values=constant_value)
    ret.set_shape(shape)
    return ret

  return _pad_to_shape


@Registry.register("preprocess_ops.reshape")
@utils.InKeyOutKey()
def get_reshape(new_shape):
  """Reshapes tensor to a given new shape.

  Args:
    new_shape: new shape for the tensor.

  Returns:
    A function for reshaping a tensor.

  """

  def _reshape(tensor):
    """Reshapes a tensor to a given shape."""
    dtype = tensor.dtype
    tensor = tf.reshape(tensor, new_shape)
    return tf.cast(tensor, dtype)

  return _reshape


@Registry.register("preprocess_ops.setdefault")
def get_setdefault(key, value):
  """If `key` is an empty tensor or missing, set it to `value`."""
  def _setdefault(data):
    x = data.get(key, tf.constant(value))
    v = tf.constant(value, dtype=x.dtype)
    v = tf.broadcast_to(v, [s or 1 for s in x.shape])
    data[key] = tf.cond(tf.size(x) > 0, lambda: x, lambda: v)
    return data
  return _setdefault
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    files = sorted(tf.io.gfile.glob(os.path.join(data_dir, "flower_photos", "*", "*.jpg")))
    data = tf.data.Dataset.from_tensor_slices(files).map(
        lambda f: {
            "image": tf.io.decode_jpeg(tf.io.read_file(f), channels=3),
            "name": tf.strings.split(f, os.sep)[-2],
            "extra": tf.zeros([3, 1]),
            "empty": tf.zeros([0], tf.int32),
        }
    )
    data = data.map(get_lookup(os.path.join(data_dir, "flower_classes.txt"), inkey="name", outkey="label"))
    data = data.map(get_onehot(3, key="label", key_result="onehot"))
    data = data.map(get_concat(["onehot", "onehot"], outkey="twohot"))
    data = data.map(get_value_range(-1, 1))
    data = data.map(get_pad_to_shape((48, 56, 3), key="image"))
    data = data.map(get_reshape([-1], inkey="image", outkey="flat"))
    data = data.map(get_squeeze_last_dim(key="extra"))
    data = data.map(get_rag_tensor(inkey="extra", outkey="ragged"))
    data = data.map(get_setdefault("empty", 7))
    data = data.map(get_drop("flat"))
    data = data.map(get_keep("image", "label", "onehot", "twohot", "extra", "ragged", "empty"))
    return data

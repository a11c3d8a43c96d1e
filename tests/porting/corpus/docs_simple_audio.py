"""TensorFlow tutorial "Simple audio recognition": waveforms to STFT spectrograms in tf.data.

Repository: https://github.com/tensorflow/docs
Path: site/en/tutorials/audio/simple_audio.ipynb (code cells with ids Xl-tnniUIBlM, _4CK75DHz_OR, mAD0LpkgqtQo)
Commit: 7c3650212740204359d4ceae481abc79345541be
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): squeeze, get_spectrogram, make_spec_ds
Changes from the original:
  - notebook cells: the cells that define functions and constants are kept at module level; the cells that build the
    pipeline are pasted, unchanged but indented, into build() between "# >>> verbatim cells" and "# <<< verbatim"
    markers (count_names.py counts them)
Harness notes:
  - train_ds/val_ds (tf.keras.utils.audio_dataset_from_directory in the tutorial: batches of (audio [b, 16000, 1]
    float32, label int32)) are built by the harness from the synthetic WAV files with tf.audio.decode_wav, zero-padded
    to 16000 samples, batch 2; tf.random.set_seed fixes the shuffle.
"""
import tensorflow as tf

DATA = "audio"
DETERMINISTIC = True


# >>> verbatim: tensorflow/docs/site/en/tutorials/audio/simple_audio.ipynb (code cells with ids Xl-tnniUIBlM, _4CK75DHz_OR, mAD0LpkgqtQo) @ 7c3650212740
def squeeze(audio, labels):
  audio = tf.squeeze(audio, axis=-1)
  return audio, labels


def get_spectrogram(waveform):
  # Convert the waveform to a spectrogram via a STFT.
  spectrogram = tf.signal.stft(
      waveform, frame_length=255, frame_step=128)
  # Obtain the magnitude of the STFT.
  spectrogram = tf.abs(spectrogram)
  # Add a `channels` dimension, so that the spectrogram can be used
  # as image-like input data with convolution layers (which expect
  # shape (`batch_size`, `height`, `width`, `channels`).
  spectrogram = spectrogram[..., tf.newaxis]
  return spectrogram


def make_spec_ds(ds):
  return ds.map(
      map_func=lambda audio,label: (get_spectrogram(audio), label),
      num_parallel_calls=tf.data.AUTOTUNE)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):
    import os

    tf.random.set_seed(0)
    root = os.path.join(data_dir, "mini_speech_commands")
    commands = sorted(d for d in os.listdir(root) if d != "README.md")
    files = sorted(tf.io.gfile.glob(os.path.join(root, "*", "*.wav")))
    labels = [commands.index(os.path.basename(os.path.dirname(f))) for f in files]

    def load(path, label):
        audio, _ = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1)
        audio = tf.pad(audio, [[0, 16000 - tf.shape(audio)[0]], [0, 0]])
        return tf.reshape(audio, [16000, 1]), label

    all_ds = tf.data.Dataset.from_tensor_slices((files, tf.constant(labels, tf.int32))).map(load)
    train_ds, val_ds = all_ds.take(4).batch(2), all_ds.skip(4).batch(2)
    # >>> verbatim cells: tensorflow/docs/site/en/tutorials/audio/simple_audio.ipynb @ 7c3650212740
    # (cell Xl-tnniUIBlM)
    train_ds = train_ds.map(squeeze, tf.data.AUTOTUNE)
    val_ds = val_ds.map(squeeze, tf.data.AUTOTUNE)
    # (cell u5UEGsqM5Gss)
    test_ds = val_ds.shard(num_shards=2, index=0)
    val_ds = val_ds.shard(num_shards=2, index=1)
    # (cell yEVb_oK0oBLQ)
    train_spectrogram_ds = make_spec_ds(train_ds)
    val_spectrogram_ds = make_spec_ds(val_ds)
    test_spectrogram_ds = make_spec_ds(test_ds)
    # (cell fdZ6M-F5_QzY)
    train_spectrogram_ds = train_spectrogram_ds.cache().shuffle(10000).prefetch(tf.data.AUTOTUNE)
    # <<< verbatim
    return train_spectrogram_ds.concatenate(val_spectrogram_ds).concatenate(test_spectrogram_ds)

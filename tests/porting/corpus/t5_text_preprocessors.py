"""T5 text-to-text preprocessors (rekey, summarize, SQuAD, span answers, non-spaced languages).

Repository: https://github.com/google-research/text-to-text-transfer-transformer
Path: t5/data/preprocessors.py
Commit: 37af7d50a62b46a4cdef4b085c16ace3ed549768
License: Apache-2.0
Kept verbatim (functions, classes, constants; in source order): rekey, summarize, NON_SPACED_LANGUAGE_RANGES,
pad_nonspaced_languages, _pad_punctuation, _string_join, squad, _span_answer, squad_span_space_tokenized
Changes from the original:
  - taken at commit 37af7d5 (2020-10-16), the last revision of the file that used `import tensorflow as tf` and plain
    dataset.map() calls (later revisions use tf.compat.v2 and seqio.map_over_dataset)
Harness notes:
  - the TFDS squad / cnn_dailymail / c4 examples are read from the synthetic tf.Example files with the same feature
    names (answers as a nested dict); the outputs are zipped.
"""
import tensorflow as tf
import os

DATA = "t5_text"
DETERMINISTIC = True


# >>> verbatim: google-research/text-to-text-transfer-transformer/t5/data/preprocessors.py @ 37af7d50a62b
def rekey(dataset, key_map=None):
  """Replace the feature keys according to the mapping in `key_map`.

  For example, if the dataset returns examples of the format:
  {'foo': 'something', 'bar': 'something else'}
  and key_map = {'boo': 'foo', 'spar': 'bar'} then this function will return
  examples with the format
  {'boo': 'something', 'spar': 'something else'}

  If a mapping is to an empty key or None, set the new key to an empty string.

  Args:
    dataset: a tf.data.Dataset to process.
    key_map: dictionary mapping new keys to original keys
  Returns:
    A preprocessed tf.data.Dataset with the format listed above.
  """
  def my_fn(x):
    if key_map:
      return {new_key: x[old_key] if old_key else ''
              for new_key, old_key in key_map.items()}
    return x
  return dataset.map(my_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def summarize(dataset, article_key, summary_key):
  """Convert a summarization dataset to a text2text pair.

  For example, say the dataset returns examples of this format:
    {'article': <article>, 'highlights': <summary>}
  If article_key = 'article', summary_key = 'highlights', then the outputs will
  have the format:
    {'inputs': 'summarize': <article>, 'targets': <summary>}

  Args:
    dataset: a tf.data.Dataset to process.
    article_key: the feature key for the article to summarize.
    summary_key: the feature key for the target summary.
  Returns:
    A preprocessed tf.data.Dataset with the format listed above.
  """
  def my_fn(x):
    """Convert summarization example to a text2text example."""
    strs_to_join = ['summarize:', x[article_key]]
    return {
        'inputs': tf.strings.join(strs_to_join, separator=' '),
        'targets': x[summary_key],
    }
  return dataset.map(my_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)


# Unicode ranges for characters in non-spaced languages.
# https://en.wikipedia.org/wiki/Category:Writing_systems_without_word_boundaries
# https://en.wikipedia.org/wiki/Han_unification#Unicode_ranges
# https://linguistics.stackexchange.com/questions/6131
NON_SPACED_LANGUAGE_RANGES = (
    '\u1000-\u104f',  # Burmese
    '\u4e00-\u9fff',  # CJK Unified Ideographs
    '\u3400-\u4dbf',  # CJK Unified Ideographs Extension A
    '\uf900-\ufaff',  # CJK Compatibility Ideographs
    '\u2e80-\u2eff',  # CJK Radicals Supplement
    '\u31c0-\u31ef',  # CJK Strokes
    '\u3000-\u303f',  # CJK Symbols and Punctuation
    '\u3040-\u309f',  # Japanese Hiragana
    '\u30a0-\u30ff',  # Japanese Katakana
    '\ua980-\ua9df',  # Javanese
    '\u1780-\u17ff',  # Khmer
    '\u19e0-\u19ff',  # Khmer Symbols
    '\u0e80-\u0eff',  # Lao
    '\u1980-\u19df',  # Tai Lue
    '\u1a20-\u1aaf',  # Tai Tham
    '\u0e00-\u0e7f',  # Thai
    '\u0f00-\u0fff',  # Tibetan
)


def pad_nonspaced_languages(dataset, text_key='text'):
  """Pad non-spaced languages with spaces around each character.

  Args:
    dataset: a tf.data.Dataset to process.
    text_key: a string, the key for the text feature to preprocess in the
      dataset examples.

  Returns:
    a tf.data.Dataset with the modified examples.
  """
  def my_fn(x):
    res = dict(x)
    text = res[text_key]
    # Add spaces around any character from a non-spaced language.
    pattern = ''.join(NON_SPACED_LANGUAGE_RANGES)
    text = tf.strings.regex_replace(text, u'([{}])'.format(pattern), r' \1 ')
    # Collapse consecutive whitespace into one space.
    text = tf.strings.regex_replace(text, r'\s+', ' ')
    res[text_key] = text
    return res

  return dataset.map(my_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def _pad_punctuation(text):
  """Adds spaces around punctuation."""
  # Add space around punctuation.
  text = tf.strings.regex_replace(text, r'(\W)', r' \1 ')
  # Collapse consecutive whitespace into one space.
  text = tf.strings.regex_replace(text, r'\s+', ' ')
  return text


def _string_join(lst):
  # Join on space, but collapse consecutive spaces.
  out = tf.strings.join(lst, separator=' ')
  return tf.strings.regex_replace(out, r'\s+', ' ')


def squad(dataset, include_context=True):
  """Convert SQuAD examples to a text2text pair.

  SQuAD produces examples with this form:
    {'id': <id>, context': <article>, 'question': <question>,
     'answers': { 'text': [<n answers>] }}
  This function will return examples of the format:
    {'inputs': 'question: <question> context: <article>',
     'targets': '<answer_0>',
     'id': <id>, 'question': <question>, 'context': <context>,
     'answers': [<n answers>]},

  Args:
    dataset: a tf.data.Dataset to process.
    include_context: a boolean
  Returns:
    A preprocessed tf.data.Dataset with the format listed above.
  """
  def my_fn(x):
    """Create squad example."""

    a = _pad_punctuation(x['answers']['text'])
    q = _pad_punctuation(x['question'])
    c = _pad_punctuation(x['context'])
    if include_context:
      inputs = _string_join(['question:', q, 'context:', c])
    else:
      inputs = _string_join(['squad trivia question:', q])
    return {
        'inputs': inputs,
        'targets': a[0],
        'id': x['id'],
        'context': c,
        'question': q,
        'answers': a
    }

  return dataset.map(my_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def _span_answer(context, answer_text):
  """Finds start/end indices of answer_text in context after space tokenization.

  If answer_tokens is not a sublist of context_tokens, returns empty string.

  Args:
    context: 0-d string tensor
    answer_text: 0-d string

  Returns:
    A string tensor.
  """
  def space_tok(s):
    """Replace non-word chars with space then split on space."""
    s = tf.strings.regex_replace(s, r'\W', ' ')
    return tf.strings.split(input=[s], sep=' ').values

  def find_subseq(n, h):
    """Finds index of needle subsequence inside haystack.

    Args:
      n: 1-d tensor
      h: 1-d tensor same type as n

    Returns:
      Index of start of n if found found; otherwise -1.
    """
    l_n = tf.size(n)
    l_h = tf.size(h)
    found = -1
    for i in tf.range(0, l_h - l_n):
      if tf.reduce_all(tf.equal(h[i:i+l_n], n)):
        found = i
        break
    return found

  answer_tokens = space_tok(answer_text)
  context_tokens = space_tok(context)
  start = find_subseq(answer_tokens, context_tokens)
  end = start + tf.size(answer_tokens) - 1
  # Just take the first candidate that matches exactly.
  if tf.equal(start, -1):
    return ''
  return tf.strings.format('start: {} end: {}', [start, end])


def squad_span_space_tokenized(dataset):
  """Convert SQuAD examples to a text2text pair with span output.

  SQuAD produces examples with this form:
    {'context': <article>, 'question': <question>,
     'answers': { 'text': [<all answers>] }}

  This function returns examples with the format
    {'inputs': 'context: <article> question: <question>',
     'targets': 'start: <start_index> end: <end_index>'}
  where <start_index> and <end_index> specify the space-tokenized span
  start/end indices. Both <start_index> and <end_index> are included in
  the answer. In the case where the tokenized answer is
  not found in the tokenized context, the example is skipped.

  Args:
    dataset: a tf.data.Dataset to process.
  Returns:
    A preprocessed tf.data.Dataset with the format listed above.
  """
  def my_fn(x):
    """Create squad example as in squad_span_char, but tokenized on spaces."""
    res = dict(x)
    res['targets'] = _span_answer(x['context'], x['targets'])
    return res

  dataset = squad(dataset)
  dataset = dataset.map(my_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)
  return dataset.filter(lambda x: tf.strings.length(x['targets']) > 0)
# <<< verbatim


# --- harness, not from the source ---
def build(tf, data_dir):

    def squad_examples():
        spec = {
            "id": tf.io.FixedLenFeature([], tf.string),
            "title": tf.io.FixedLenFeature([], tf.string),
            "context": tf.io.FixedLenFeature([], tf.string),
            "question": tf.io.FixedLenFeature([], tf.string),
            "answers/text": tf.io.VarLenFeature(tf.string),
            "answers/answer_start": tf.io.VarLenFeature(tf.int64),
        }

        def parse(record):
            x = tf.io.parse_single_example(record, spec)
            answers = {
                "text": tf.sparse.to_dense(x.pop("answers/text")),
                "answer_start": tf.cast(tf.sparse.to_dense(x.pop("answers/answer_start")), tf.int32),
            }
            return dict(x, answers=answers)

        return tf.data.TFRecordDataset(os.path.join(data_dir, "squad.tfrecord")).map(parse)

    def text_examples(name, keys):
        spec = {k: tf.io.FixedLenFeature([], tf.string) for k in keys}
        return tf.data.TFRecordDataset(os.path.join(data_dir, name)).map(lambda r: tf.io.parse_single_example(r, spec))

    articles = text_examples("cnn_dailymail.tfrecord", ["article", "highlights"])
    c4 = text_examples("c4.tfrecord", ["text", "url"])
    return tf.data.Dataset.zip(
        (
            squad(squad_examples()),
            squad(squad_examples(), include_context=False),
            squad_span_space_tokenized(squad_examples()),
            summarize(articles, article_key="article", summary_key="highlights"),
            rekey(articles, {"inputs": "article", "targets": "highlights", "none": None}),
            pad_nonspaced_languages(c4),
        )
    )

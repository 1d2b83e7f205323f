"""`tf.keras.datasets.imdb` and `reuters`: word-index sequences from Keras' npz archives.

Their members are ragged object arrays (lists of ints), stored as pickle streams; each is
read with `_restricted_pickle` (arrays, lists and numbers only), never np.load(allow_pickle).
Shuffling, index shifting, maxlen filtering and the vocabulary cut follow Keras 3.15 step
by step, so the same file and arguments give Keras' arrays."""

import json
import zipfile

import numpy as np

from ndflow.core.api_export import keras_export
from ndflow.core.doc_tables import attach
from ndflow.core.errors import DataLossError
from ndflow.keras.datasets import _cache, _restricted_pickle, _text_sequences_docs

_IMDB_SHA256 = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
_IMDB_INDEX_MD5 = "bfafd718b763782e994055a2d397834f"
_REUTERS_SHA256 = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
_REUTERS_INDEX_MD5 = "4d44cc38712099c9e383dc6e5f11a921"
_REUTERS_LABELS = (
    "cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply",
    "coffee", "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas",
    "cpi", "money-fx", "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin",
    "strategic-metal", "livestock", "retail", "ipi", "iron-steel", "rubber", "heat", "jobs",
    "lei", "bop", "zinc", "orange", "pet-chem", "dlr", "gas", "silver", "wpi", "hog", "lead")


@keras_export("keras.datasets.imdb.load_data")
def load_imdb(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
              start_char=1, oov_char=2, index_from=3, **kwargs):
    members = _read_npz("IMDB", path, "imdb.npz", _IMDB_SHA256,
                        ("x_train", "y_train", "x_test", "y_test"))
    x_train, labels_train, x_test, labels_test = members
    rng = np.random.RandomState(seed)
    indices = np.arange(len(x_train))
    rng.shuffle(indices)
    x_train, labels_train = x_train[indices], labels_train[indices]
    indices = np.arange(len(x_test))
    rng.shuffle(indices)
    x_test, labels_test = x_test[indices], labels_test[indices]
    x_train = _shift(x_train, start_char, index_from)
    x_test = _shift(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = _remove_long(maxlen, x_train, labels_train)
        x_test, labels_test = _remove_long(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, "
                             "no sequence was kept. Increase maxlen.")
    xs = _vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    cut = len(x_train)
    return ((_object_array(xs[:cut]), labels[:cut]), (_object_array(xs[cut:]), labels[cut:]))


@keras_export("keras.datasets.reuters.load_data")
def load_reuters(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2,
                 seed=113, start_char=1, oov_char=2, index_from=3):
    xs, labels = _read_npz("Reuters", path, "reuters.npz", _REUTERS_SHA256, ("x", "y"))
    indices = np.arange(len(xs))
    np.random.RandomState(seed).shuffle(indices)
    xs, labels = xs[indices], labels[indices]
    if start_char is not None or index_from:
        xs = _shift(xs, start_char, index_from)
    if maxlen:
        xs, labels = _remove_long(maxlen, xs, labels)
    xs = _vocabulary(xs, num_words, skip_top, oov_char)
    cut = int(len(xs) * (1 - test_split))
    return ((_object_array(xs[:cut]), np.array(labels[:cut])),
            (_object_array(xs[cut:]), np.array(labels[cut:])))


@keras_export("keras.datasets.imdb.get_word_index")
def imdb_word_index(path="imdb_word_index.json"):
    """The IMDB dataset's vocabulary: a dict from word to its frequency rank (1 the most
    frequent; the encoded reviews add `index_from` to these). Downloaded once into
    ~/.keras/datasets.

    Args:
      path: the file name to cache it under.

    Returns:
      A dict from word to int.
    """
    return _read_json("IMDB word index", path, "imdb_word_index.json", _IMDB_INDEX_MD5)


@keras_export("keras.datasets.reuters.get_word_index")
def reuters_word_index(path="reuters_word_index.json"):
    """The Reuters dataset's vocabulary: each word's index in the encoded newswires
    (downloaded once into ~/.keras/datasets).

    Args:
      path: the file name to cache it under.

    Returns:
      A dict from word to int index (ranked by frequency, 1 the most frequent; the
      encoded data add `index_from` to these).

    Raises:
      DataLossError: the cached file is corrupt.
    """
    return _read_json("Reuters word index", path, "reuters_word_index.json",
                      _REUTERS_INDEX_MD5)


@keras_export("keras.datasets.reuters.get_label_names")
def reuters_label_names():
    """The names of the Reuters dataset's 46 topics, indexed by label.

    Returns:
      A tuple of 46 strings.
    """
    return _REUTERS_LABELS


def _shift(xs, start_char, index_from):
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in xs]
    if index_from:
        return [[w + index_from for w in x] for x in xs]
    return [list(x) for x in xs]


def _remove_long(maxlen, seqs, labels):
    kept = [(x, y) for x, y in zip(seqs, labels) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def _vocabulary(xs, num_words, skip_top, oov_char):
    """Words outside [skip_top, num_words) become `oov_char` (or are dropped if None)."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def _object_array(lists):
    out = np.empty(len(lists), dtype=object)   # always 1-d, even for equal lengths
    out[:] = lists
    return out


def _read_npz(dataset: str, path, origin_name: str, sha256: str, keys) -> list:
    file = _cache.fetch_fname(dataset, path, origin_name, sha256)
    try:
        with zipfile.ZipFile(file) as zf:
            names = {n[:-4] if n.endswith(".npy") else n: n for n in zf.namelist()}
            missing = [k for k in keys if k not in names]
            if missing:
                raise DataLossError(None, None, f"Corrupt {dataset} archive {file}: it has "
                                                f"no {missing} (members: {sorted(names)})")
            return [_read_member(zf, names[k]) for k in keys]
    except DataLossError:
        raise
    except Exception as e:  # noqa: BLE001 - any parse failure of a foreign file is corruption
        raise DataLossError(None, None, f"Corrupt {dataset} archive {file}: "
                                        f"{type(e).__name__}: {e}") from None


def _read_member(zf: zipfile.ZipFile, name: str):
    with zf.open(name) as member:
        version = np.lib.format.read_magic(member)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(member)
        if dtype.hasobject:      # a pickle stream: arrays, lists and numbers only
            array = _restricted_pickle.load_restricted(member.read())
            if not isinstance(array, np.ndarray):
                raise ValueError(f"member {name} unpickles to {type(array).__name__}, "
                                 "not an array")
            return array
        count = int(np.prod(shape, dtype=np.int64))
        data = member.read(count * dtype.itemsize)
        if len(data) != count * dtype.itemsize:
            raise ValueError(f"member {name} is truncated")
        array = np.frombuffer(data, dtype=dtype).copy()
        return array.reshape(shape[::-1]).T if fortran else array.reshape(shape)


def _read_json(dataset: str, path, origin_name: str, md5: str):
    file = _cache.fetch_fname(dataset, path, origin_name, md5)
    try:
        with open(file, encoding="utf-8") as f:
            return json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise DataLossError(None, None, f"Corrupt {dataset} file {file}: {e}") from None


attach(globals(), _text_sequences_docs.DOCS)

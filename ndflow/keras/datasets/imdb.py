"""`tf.keras.datasets.imdb` (implemented in _text_sequences.py)."""

from ndflow.keras.datasets._text_sequences import imdb_word_index as get_word_index  # noqa: F401
from ndflow.keras.datasets._text_sequences import load_imdb as load_data  # noqa: F401

"""`tf.keras.datasets.reuters` (implemented in _text_sequences.py)."""

from ndflow.keras.datasets._text_sequences import load_reuters as load_data  # noqa: F401
from ndflow.keras.datasets._text_sequences import (  # noqa: F401
    reuters_label_names as get_label_names,
)
from ndflow.keras.datasets._text_sequences import (  # noqa: F401
    reuters_word_index as get_word_index,
)

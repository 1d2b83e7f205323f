# Source: keras-team/keras-io, examples/nlp/bidirectional_lstm_imdb.py ("Bidirectional LSTM
#   on IMDB", fchollet, 2020/05/03),
#   https://github.com/keras-team/keras-io/blob/master/examples/nlp/bidirectional_lstm_imdb.py
#   License: Apache-2.0.
# Changed: synthetic_data.imdb_load_data() (256 train / 128 validation learnable reviews of
#   word ids) stands in for keras.datasets.imdb.load_data(num_words=max_features); maxlen
#   200 -> 80 (to keep the run short on 2 cores); the code runs in main(), which
#   returns the last epoch's metrics.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: E501, F401, I001
import numpy as np
from tensorflow import keras
from tensorflow.keras import layers

from synthetic_data import imdb_load_data


def main():
    max_features = 20000  # Only consider the top 20k words
    maxlen = 80  # Only consider the first 200 words of each movie review

    # Input for variable-length sequences of integers
    inputs = keras.Input(shape=(None,), dtype="int32")
    # Embed each integer in a 128-dimensional vector
    x = layers.Embedding(max_features, 128)(inputs)
    # Add 2 bidirectional LSTMs
    x = layers.Bidirectional(layers.LSTM(64, return_sequences=True))(x)
    x = layers.Bidirectional(layers.LSTM(64))(x)
    # Add a classifier
    outputs = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.summary()

    (x_train, y_train), (x_val, y_val) = imdb_load_data(
        num_words=max_features, n_train=256, n_test=128
    )
    print(len(x_train), "Training sequences")
    print(len(x_val), "Validation sequences")
    # Use pad_sequence to standardize sequence length:
    # this will truncate sequences longer than 200 words and zero-pad sequences shorter than 200 words.
    x_train = keras.preprocessing.sequence.pad_sequences(x_train, maxlen=maxlen)
    x_val = keras.preprocessing.sequence.pad_sequences(x_val, maxlen=maxlen)

    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x_train, y_train, batch_size=32, epochs=2,
                        validation_data=(x_val, y_val))
    return {k: v[-1] for k, v in history.history.items()}

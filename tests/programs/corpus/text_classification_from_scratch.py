# Source: keras-team/keras-io, examples/nlp/text_classification_from_scratch.py ("Text
#   classification from scratch", Mark Omernick, Francois Chollet; last modified 2026/02/02),
#   https://github.com/keras-team/keras-io/blob/master/examples/nlp/text_classification_from_scratch.py
#   License: Apache-2.0.
# Changed: synthetic_data.write_imdb_text_dir() writes an aclImdb/{train,test}/{pos,neg}
#   folder of 640 + 160 short learnable reviews (with <br /> tags and punctuation) in the
#   working directory in place of keras.utils.get_file(...aclImdb_v1.tar.gz, extract=True);
#   sequence_length 500 -> 200 (the reviews are short);
#   the "shell" cells (ls, cat, rm -r aclImdb/train/unsup) are not code and stay out; the
#   code runs in main(), which returns the fit's last epoch and both evaluations.
#   As written, the test split gets alphabetical labels (neg = 0) while the training
#   split's class_names=["pos", "neg"] make pos = 0: the test metrics score flipped labels
#   (accuracy near 0 on this data), under TensorFlow as on ndflow.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F401, I001
import os

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras
import tensorflow as tf
import numpy as np
from keras import layers

from synthetic_data import write_imdb_text_dir


def main():
    dataset_dir = write_imdb_text_dir(".", n_train=640, n_test=160)

    batch_size = 32
    train_dir = os.path.join(dataset_dir, "train")
    test_dir = os.path.join(dataset_dir, "test")

    raw_train_ds = keras.utils.text_dataset_from_directory(
        train_dir,
        batch_size=batch_size,
        validation_split=0.2,
        subset="training",
        seed=1337,
        class_names=["pos", "neg"],
    )
    raw_val_ds = keras.utils.text_dataset_from_directory(
        train_dir,
        batch_size=batch_size,
        validation_split=0.2,
        subset="validation",
        seed=1337,
        class_names=["pos", "neg"],
    )
    raw_test_ds = keras.utils.text_dataset_from_directory(test_dir, batch_size=batch_size)

    print(f"Number of batches in raw_train_ds: {raw_train_ds.cardinality()}")
    print(f"Number of batches in raw_val_ds: {raw_val_ds.cardinality()}")
    print(f"Number of batches in raw_test_ds: {raw_test_ds.cardinality()}")

    # It's important to take a look at your raw data to ensure your normalization
    # and tokenization will work as expected. We can do that by taking a few
    # examples from the training set and looking at them.
    # This is one of the places where eager execution shines:
    # we can just evaluate these tensors using .numpy()
    # instead of needing to evaluate them in a Session/Graph context.
    for text_batch, label_batch in raw_train_ds.take(1):
        for i in range(5):
            print(text_batch.numpy()[i])
            print(label_batch.numpy()[i])

    import string
    import re

    # Having looked at our data above, we see that the raw text contains HTML break
    # tags of the form '<br />'. These tags will not be removed by the default
    # standardizer (which doesn't strip HTML). Because of this, we will need to
    # create a custom standardization function.
    def custom_standardization(input_data):
        lowercase = tf.strings.lower(input_data)
        stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
        return tf.strings.regex_replace(
            stripped_html, f"[{re.escape(string.punctuation)}]", ""
        )

    # Model constants.
    max_features = 20000
    embedding_dim = 128
    sequence_length = 200

    # Now that we have our custom standardization, we can instantiate our text
    # vectorization layer. We are using this layer to normalize, split, and map
    # strings to integers, so we set our 'output_mode' to 'int'.
    # Note that we're using the default split function,
    # and the custom standardization defined above.
    # We also set an explicit maximum sequence length, since the CNNs later in our
    # model won't support ragged sequences.
    vectorize_layer = keras.layers.TextVectorization(
        standardize=custom_standardization,
        max_tokens=max_features,
        output_mode="int",
        output_sequence_length=sequence_length,
    )

    # Now that the vectorize_layer has been created, call `adapt` on a text-only
    # dataset to create the vocabulary. You don't have to batch, but for very large
    # datasets this means you're not keeping spare copies of the dataset in memory.

    # Let's make a text-only dataset (no labels):
    text_ds = raw_train_ds.map(lambda x, y: x)
    # Let's call `adapt`:
    vectorize_layer.adapt(text_ds)

    def vectorize_text(text, label):
        text = tf.expand_dims(text, -1)
        return vectorize_layer(text), label

    # Vectorize the data.
    train_ds = raw_train_ds.map(vectorize_text)
    val_ds = raw_val_ds.map(vectorize_text)
    test_ds = raw_test_ds.map(vectorize_text)

    # Do async prefetching / buffering of the data for best performance on GPU.
    train_ds = train_ds.cache().prefetch(buffer_size=10)
    val_ds = val_ds.cache().prefetch(buffer_size=10)
    test_ds = test_ds.cache().prefetch(buffer_size=10)

    # A integer input for vocab indices.
    inputs = keras.Input(shape=(None,), dtype="int64")

    # Next, we add a layer to map those vocab indices into a space of dimensionality
    # 'embedding_dim'.
    x = layers.Embedding(max_features, embedding_dim)(inputs)
    x = layers.Dropout(0.5)(x)

    # Conv1D + global max pooling
    x = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(x)
    x = layers.Conv1D(128, 7, padding="valid", activation="relu", strides=3)(x)
    x = layers.GlobalMaxPooling1D()(x)

    # We add a vanilla hidden layer:
    x = layers.Dense(128, activation="relu")(x)
    x = layers.Dropout(0.5)(x)

    # We project onto a single unit output layer, and squash it with a sigmoid:
    predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)

    model = keras.Model(inputs, predictions)

    # Compile the model with binary crossentropy loss and an adam optimizer.
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

    epochs = 3

    # Fit the model using the train and test datasets.
    history = model.fit(train_ds, validation_data=val_ds, epochs=epochs)

    test_loss, test_acc = model.evaluate(test_ds)

    # A string input
    inputs = keras.Input(shape=(1,), dtype="string")
    # Turn strings into vocab indices
    indices = vectorize_layer(inputs)
    # Turn vocab indices into predictions
    outputs = model(indices)

    # Our end to end model
    end_to_end_model = keras.Model(inputs, outputs)
    end_to_end_model.compile(
        loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"]
    )

    # Test it with `raw_test_ds`, which yields raw strings
    e2e_loss, e2e_acc = end_to_end_model.evaluate(raw_test_ds)
    return {"test_loss": test_loss, "test_accuracy": test_acc, "end_to_end_loss": e2e_loss,
            "end_to_end_accuracy": e2e_acc, "vocabulary_size":
            vectorize_layer.vocabulary_size(), **{k: v[-1] for k, v in history.history.items()}}

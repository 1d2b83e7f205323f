# Source: keras-team/keras-io, examples/structured_data/imbalanced_classification.py
#   ("Imbalanced classification: credit card fraud detection", fchollet, last modified
#   2020/04/17), https://github.com/keras-team/keras-io/blob/master/examples/structured_data/imbalanced_classification.py
#   License: Apache-2.0.
# Changed: synthetic_data.write_creditcard_csv() writes a creditcard.csv of 4,096
#   transactions (same quoted header and 30 float columns, ~2% learnable frauds) into the
#   working directory and fname points to it instead of the author's ~/Downloads copy of
#   Kaggle's file; epochs 30 -> 10; the code runs in main(), which returns the last epoch's
#   metrics and how many per-epoch .keras checkpoints were written.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F401, I001, UP032
import csv
import os

import numpy as np

from synthetic_data import write_creditcard_csv


def main():
    write_creditcard_csv("creditcard.csv")
    # Get the real data from https://www.kaggle.com/mlg-ulb/creditcardfraud/
    fname = "creditcard.csv"

    all_features = []
    all_targets = []
    with open(fname) as f:
        for i, line in enumerate(f):
            if i == 0:
                print("HEADER:", line.strip())
                continue  # Skip header
            fields = line.strip().split(",")
            all_features.append([float(v.replace('"', "")) for v in fields[:-1]])
            all_targets.append([int(fields[-1].replace('"', ""))])
            if i == 1:
                print("EXAMPLE FEATURES:", all_features[-1])

    features = np.array(all_features, dtype="float32")
    targets = np.array(all_targets, dtype="uint8")
    print("features.shape:", features.shape)
    print("targets.shape:", targets.shape)

    num_val_samples = int(len(features) * 0.2)
    train_features = features[:-num_val_samples]
    train_targets = targets[:-num_val_samples]
    val_features = features[-num_val_samples:]
    val_targets = targets[-num_val_samples:]

    print("Number of training samples:", len(train_features))
    print("Number of validation samples:", len(val_features))

    counts = np.bincount(train_targets[:, 0])
    print(
        "Number of positive samples in training data: {} ({:.2f}% of total)".format(
            counts[1], 100 * float(counts[1]) / len(train_targets)
        )
    )

    weight_for_0 = 1.0 / counts[0]
    weight_for_1 = 1.0 / counts[1]

    mean = np.mean(train_features, axis=0)
    train_features -= mean
    val_features -= mean
    std = np.std(train_features, axis=0)
    train_features /= std
    val_features /= std

    import keras

    model = keras.Sequential(
        [
            keras.Input(shape=train_features.shape[1:]),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.summary()

    metrics = [
        keras.metrics.FalseNegatives(name="fn"),
        keras.metrics.FalsePositives(name="fp"),
        keras.metrics.TrueNegatives(name="tn"),
        keras.metrics.TruePositives(name="tp"),
        keras.metrics.Precision(name="precision"),
        keras.metrics.Recall(name="recall"),
    ]

    model.compile(
        optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=metrics
    )

    callbacks = [keras.callbacks.ModelCheckpoint("fraud_model_at_epoch_{epoch}.keras")]
    class_weight = {0: weight_for_0, 1: weight_for_1}

    history = model.fit(
        train_features,
        train_targets,
        batch_size=2048,
        epochs=10,
        verbose=2,
        callbacks=callbacks,
        validation_data=(val_features, val_targets),
        class_weight=class_weight,
    )
    checkpoints = [f for f in os.listdir(".") if f.startswith("fraud_model_at_epoch_")]
    return {"checkpoints": len(checkpoints), **{k: v[-1] for k, v in history.history.items()}}

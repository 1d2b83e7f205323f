# Source: keras-team/keras-io, examples/timeseries/timeseries_classification_from_scratch.py
#   ("Timeseries classification from scratch", hfawaz; Keras 3 version, last modified
#   2021/07/16), https://keras.io/examples/timeseries/timeseries_classification_from_scratch/
#   License: Apache-2.0.
# Changed: synthetic_data.write_ucr_tsv() writes FordA_TRAIN.tsv / FordA_TEST.tsv (256 and
#   128 learnable series of length 500) into the working directory, and root_url points
#   there instead of raw.githubusercontent.com; epochs 500 -> 8 with the callbacks' patience
#   scaled down with them (ReduceLROnPlateau 20 -> 2, EarlyStopping 50 -> 3); the matplotlib
#   plots are left out (no matplotlib here) and plot_model (graphviz) too; the code runs in
#   main(), which returns the test metrics of the reloaded best model and the last epoch's.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001
import keras
import numpy as np

from synthetic_data import write_ucr_tsv


def main():
    write_ucr_tsv("FordA_TRAIN.tsv", 256, seed=1)
    write_ucr_tsv("FordA_TEST.tsv", 128, seed=2)

    def readucr(filename):
        data = np.loadtxt(filename, delimiter="\t")
        y = data[:, 0]
        x = data[:, 1:]
        return x, y.astype(int)

    root_url = ""

    x_train, y_train = readucr(root_url + "FordA_TRAIN.tsv")
    x_test, y_test = readucr(root_url + "FordA_TEST.tsv")

    classes = np.unique(np.concatenate((y_train, y_test), axis=0))

    x_train = x_train.reshape((x_train.shape[0], x_train.shape[1], 1))
    x_test = x_test.reshape((x_test.shape[0], x_test.shape[1], 1))

    num_classes = len(np.unique(y_train))

    idx = np.random.permutation(len(x_train))
    x_train = x_train[idx]
    y_train = y_train[idx]

    y_train[y_train == -1] = 0
    y_test[y_test == -1] = 0

    def make_model(input_shape):
        input_layer = keras.layers.Input(input_shape)

        conv1 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(input_layer)
        conv1 = keras.layers.BatchNormalization()(conv1)
        conv1 = keras.layers.ReLU()(conv1)

        conv2 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv1)
        conv2 = keras.layers.BatchNormalization()(conv2)
        conv2 = keras.layers.ReLU()(conv2)

        conv3 = keras.layers.Conv1D(filters=64, kernel_size=3, padding="same")(conv2)
        conv3 = keras.layers.BatchNormalization()(conv3)
        conv3 = keras.layers.ReLU()(conv3)

        gap = keras.layers.GlobalAveragePooling1D()(conv3)

        output_layer = keras.layers.Dense(num_classes, activation="softmax")(gap)

        return keras.models.Model(inputs=input_layer, outputs=output_layer)

    model = make_model(input_shape=x_train.shape[1:])

    epochs = 8
    batch_size = 32

    callbacks = [
        keras.callbacks.ModelCheckpoint(
            "best_model.keras", save_best_only=True, monitor="val_loss"
        ),
        keras.callbacks.ReduceLROnPlateau(
            monitor="val_loss", factor=0.5, patience=2, min_lr=0.0001
        ),
        keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, verbose=1),
    ]
    model.compile(
        optimizer="adam",
        loss="sparse_categorical_crossentropy",
        metrics=["sparse_categorical_accuracy"],
    )
    history = model.fit(
        x_train,
        y_train,
        batch_size=batch_size,
        epochs=epochs,
        callbacks=callbacks,
        validation_split=0.2,
        verbose=1,
    )

    model = keras.models.load_model("best_model.keras")

    test_loss, test_acc = model.evaluate(x_test, y_test)

    print("Test accuracy", test_acc)
    print("Test loss", test_loss)
    return {"test_loss": test_loss, "test_accuracy": test_acc,
            "epochs_run": len(history.history["loss"]),
            **{k: v[-1] for k, v in history.history.items()}}

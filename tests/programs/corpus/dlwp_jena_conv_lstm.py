# Source: fchollet/deep-learning-with-python-notebooks, chapter13_timeseries-forecasting.ipynb
#   (Deep Learning with Python, 3rd edition, F. Chollet & M. Watson), sections "A
#   temperature forecasting example", "Preparing the data", "Let's try a basic machine
#   learning model", "Let's try a 1D convolutional model" and "Recurrent neural networks",
#   https://github.com/fchollet/deep-learning-with-python-notebooks  License: MIT.
# Changed: KERAS_BACKEND "jax" -> "tensorflow" (the README's backend choice); instead of
#   the wget/unzip of jena_climate_2009_2016.csv, synthetic_data.write_jena_csv() writes an
#   8,000-row file of the same format that the notebook's own parsing code reads (the
#   notebook's sequence_length of 120 steps is kept: the convnet needs it); batch_size 256
#   -> 512 and epochs 10 -> 1; the plt cells are left out (no matplotlib here); the code
#   runs in main(), which returns each model's last epoch metrics and reloaded test MAE.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: I001, F541, E402
import os

os.environ["KERAS_BACKEND"] = "tensorflow"

from synthetic_data import write_jena_csv


def main():
    write_jena_csv("jena_climate_2009_2016.csv", n=8000)
    out = {}
    import os

    fname = os.path.join("jena_climate_2009_2016.csv")

    with open(fname) as f:
        data = f.read()

    lines = data.split("\n")
    header = lines[0].split(",")
    lines = lines[1:]
    print(header)
    print(len(lines))

    import numpy as np

    temperature = np.zeros((len(lines),))
    raw_data = np.zeros((len(lines), len(header) - 1))

    for i, line in enumerate(lines):
        values = [float(x) for x in line.split(",")[1:]]
        temperature[i] = values[1]
        raw_data[i, :] = values[:]

    num_train_samples = int(0.5 * len(raw_data))
    num_val_samples = int(0.25 * len(raw_data))
    num_test_samples = len(raw_data) - num_train_samples - num_val_samples
    print("num_train_samples:", num_train_samples)
    print("num_val_samples:", num_val_samples)
    print("num_test_samples:", num_test_samples)

    mean = raw_data[:num_train_samples].mean(axis=0)
    raw_data -= mean
    std = raw_data[:num_train_samples].std(axis=0)
    raw_data /= std

    import numpy as np
    import keras

    sampling_rate = 6
    sequence_length = 120
    delay = sampling_rate * (sequence_length + 24 - 1)
    batch_size = 512

    train_dataset = keras.utils.timeseries_dataset_from_array(
        raw_data[:-delay],
        targets=temperature[delay:],
        sampling_rate=sampling_rate,
        sequence_length=sequence_length,
        shuffle=True,
        batch_size=batch_size,
        start_index=0,
        end_index=num_train_samples,
    )

    val_dataset = keras.utils.timeseries_dataset_from_array(
        raw_data[:-delay],
        targets=temperature[delay:],
        sampling_rate=sampling_rate,
        sequence_length=sequence_length,
        shuffle=True,
        batch_size=batch_size,
        start_index=num_train_samples,
        end_index=num_train_samples + num_val_samples,
    )

    test_dataset = keras.utils.timeseries_dataset_from_array(
        raw_data[:-delay],
        targets=temperature[delay:],
        sampling_rate=sampling_rate,
        sequence_length=sequence_length,
        shuffle=True,
        batch_size=batch_size,
        start_index=num_train_samples + num_val_samples,
    )

    for samples, targets in train_dataset:
        print("samples shape:", samples.shape)
        print("targets shape:", targets.shape)
        break

    def evaluate_naive_method(dataset):
        total_abs_err = 0.0
        samples_seen = 0
        for samples, targets in dataset:
            preds = samples[:, -1, 1] * std[1] + mean[1]
            total_abs_err += np.sum(np.abs(preds - targets))
            samples_seen += samples.shape[0]
        return total_abs_err / samples_seen

    print(f"Validation MAE: {evaluate_naive_method(val_dataset):.2f}")
    print(f"Test MAE: {evaluate_naive_method(test_dataset):.2f}")
    out["naive_test_mae"] = evaluate_naive_method(test_dataset)

    import keras
    from keras import layers

    inputs = keras.Input(shape=(sequence_length, raw_data.shape[-1]))
    x = layers.Flatten()(inputs)
    x = layers.Dense(16, activation="relu")(x)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    callbacks = [
        keras.callbacks.ModelCheckpoint("jena_dense.keras", save_best_only=True)
    ]
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    history = model.fit(
        train_dataset,
        epochs=1,
        validation_data=val_dataset,
        callbacks=callbacks,
    )
    out.update({"dense_" + k: v[-1] for k, v in history.history.items()})

    model = keras.models.load_model("jena_dense.keras")
    print(f"Test MAE: {model.evaluate(test_dataset)[1]:.2f}")
    out["dense_test_mae"] = model.evaluate(test_dataset)[1]

    inputs = keras.Input(shape=(sequence_length, raw_data.shape[-1]))
    x = layers.Conv1D(8, 24, activation="relu")(inputs)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(8, 12, activation="relu")(x)
    x = layers.MaxPooling1D(2)(x)
    x = layers.Conv1D(8, 6, activation="relu")(x)
    x = layers.GlobalAveragePooling1D()(x)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    callbacks = [
        keras.callbacks.ModelCheckpoint("jena_conv.keras", save_best_only=True)
    ]
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    history = model.fit(
        train_dataset,
        epochs=1,
        validation_data=val_dataset,
        callbacks=callbacks,
    )
    out.update({"conv_" + k: v[-1] for k, v in history.history.items()})

    model = keras.models.load_model("jena_conv.keras")
    print(f"Test MAE: {model.evaluate(test_dataset)[1]:.2f}")
    out["conv_test_mae"] = model.evaluate(test_dataset)[1]

    inputs = keras.Input(shape=(sequence_length, raw_data.shape[-1]))
    x = layers.LSTM(16)(inputs)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    callbacks = [
        keras.callbacks.ModelCheckpoint("jena_lstm.keras", save_best_only=True)
    ]
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    history = model.fit(
        train_dataset,
        epochs=1,
        validation_data=val_dataset,
        callbacks=callbacks,
    )
    out.update({"lstm_" + k: v[-1] for k, v in history.history.items()})

    model = keras.models.load_model("jena_lstm.keras")
    print("Test MAE: {model.evaluate(test_dataset)[1]:.2f}")
    out["lstm_test_mae"] = model.evaluate(test_dataset)[1]
    return out

# Source: fchollet/deep-learning-with-python-notebooks, chapter13_timeseries-forecasting.ipynb
#   (Deep Learning with Python, 3rd edition, F. Chollet & M. Watson), sections "A
#   temperature forecasting example", "Preparing the data", "A common-sense,
#   non-machine-learning baseline" and "Stacking recurrent layers",
#   https://github.com/fchollet/deep-learning-with-python-notebooks  License: MIT.
# Changed: KERAS_BACKEND "jax" -> "tensorflow" (the README's backend choice); instead of
#   the wget/unzip of jena_climate_2009_2016.csv, synthetic_data.write_jena_csv() writes a
#   2,000-row file of the same format (header, date column, 14 readings) that the
#   notebook's own parsing code reads; sequence_length 120 -> 24 (the delay follows it)
#   and epochs 50 -> 3; the plt cells are left out (no matplotlib here); the code runs in
#   main(), which returns the baseline's and the reloaded GRU model's MAEs.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: I001
import os

os.environ["KERAS_BACKEND"] = "tensorflow"

from synthetic_data import write_jena_csv


def main():
    write_jena_csv("jena_climate_2009_2016.csv", n=2000)
    results = {}

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

    int_sequence = np.arange(10)
    dummy_dataset = keras.utils.timeseries_dataset_from_array(
        data=int_sequence[:-3],
        targets=int_sequence[3:],
        sequence_length=3,
        batch_size=2,
    )

    for inputs, targets in dummy_dataset:
        for i in range(inputs.shape[0]):
            print([int(x) for x in inputs[i]], int(targets[i]))

    sampling_rate = 6
    sequence_length = 24
    delay = sampling_rate * (sequence_length + 24 - 1)
    batch_size = 256

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
    results["naive_val_mae"] = float(evaluate_naive_method(val_dataset))
    results["naive_test_mae"] = float(evaluate_naive_method(test_dataset))

    import keras
    from keras import layers

    inputs = keras.Input(shape=(sequence_length, raw_data.shape[-1]))
    x = layers.GRU(32, recurrent_dropout=0.5, return_sequences=True)(inputs)
    x = layers.GRU(32, recurrent_dropout=0.5)(x)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    callbacks = [
        keras.callbacks.ModelCheckpoint(
            "jena_stacked_gru_dropout.keras", save_best_only=True
        )
    ]
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    history = model.fit(
        train_dataset,
        epochs=3,
        validation_data=val_dataset,
        callbacks=callbacks,
    )
    model = keras.models.load_model("jena_stacked_gru_dropout.keras")
    print(f"Test MAE: {model.evaluate(test_dataset)[1]:.2f}")
    results["gru_test_mae"] = model.evaluate(test_dataset)[1]
    results.update({"gru_" + k: v[-1] for k, v in history.history.items()})
    return results

# Keras guide "Training & evaluation with the built-in methods" (TF 2.21 / Keras 3): fit,
# evaluate, predict, custom losses and metrics, add_loss, validation_split, tf.data inputs,
# class and sample weights, EarlyStopping, schedules, custom callbacks. Random stand-ins for
# MNIST; seeded and unshuffled, so every printed loss equals TF 2.21's to 4 decimals.
import numpy as np
import ndflow as tf
keras = tf.keras
ops = keras.ops
layers = keras.layers
keras.utils.set_random_seed(1)

rng = np.random.RandomState(0)
x_train = rng.rand(600, 784).astype("float32")
y_train = rng.randint(0, 10, 600)
x_val, y_val = x_train[-100:], y_train[-100:]
x_test, y_test = x_train[:50], y_train[:50]

def get_uncompiled_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    return keras.Model(inputs=inputs, outputs=outputs)

def get_compiled_model():
    model = get_uncompiled_model()
    model.compile(optimizer="rmsprop", loss="sparse_categorical_crossentropy",
                  metrics=["sparse_categorical_accuracy"])
    return model

model = get_compiled_model()
history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_data=(x_val, y_val), shuffle=False, verbose=0)
print({k: np.round(v, 4).tolist() for k, v in history.history.items()})
results = model.evaluate(x_test, y_test, batch_size=128, verbose=0)
print("test loss, test acc:", np.round(results, 4).tolist())
predictions = model.predict(x_test[:3], verbose=0)
print("predictions shape:", predictions.shape, np.round(predictions[0, :3], 4).tolist())

def custom_mean_squared_error(y_true, y_pred):
    return ops.mean(ops.square(y_true - y_pred), axis=-1)
model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=custom_mean_squared_error)
y_train_one_hot = ops.one_hot(y_train, num_classes=10)
h = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, shuffle=False, verbose=0)
print("custom mse", np.round(h.history["loss"], 4).tolist())

class CustomMSE(keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse"):
        super().__init__(name=name)
        self.regularization_factor = regularization_factor
    def call(self, y_true, y_pred):
        mse = ops.mean(ops.square(y_true - y_pred), axis=-1)
        reg = ops.mean(ops.square(0.5 - y_pred), axis=-1)
        return mse + reg * self.regularization_factor
model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.Adam(), loss=CustomMSE())
h = model.fit(x_train, y_train_one_hot, batch_size=64, epochs=1, shuffle=False, verbose=0)
print("CustomMSE", np.round(h.history["loss"], 4).tolist())

class CategoricalTruePositives(keras.metrics.Metric):
    def __init__(self, name="categorical_true_positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")
    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = ops.reshape(ops.argmax(y_pred, axis=1), (-1, 1))
        values = ops.cast(y_true, "int32") == ops.cast(y_pred, "int32")
        values = ops.cast(values, "float32")
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, "float32")
            values = ops.multiply(values, sample_weight)
        self.true_positives.assign_add(ops.sum(values))
    def result(self):
        return self.true_positives
    def reset_state(self):
        self.true_positives.assign(0.0)
model = get_uncompiled_model()
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(),
              metrics=[CategoricalTruePositives()])
h = model.fit(x_train, y_train, batch_size=64, epochs=2, shuffle=False, verbose=0)
print("ctp", {k: np.round(v, 4).tolist() for k, v in h.history.items()})

class ActivityRegularizationLayer(layers.Layer):
    def call(self, inputs):
        self.add_loss(ops.sum(inputs) * 0.1)
        return inputs
inputs = keras.Input(shape=(784,), name="digits")
x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
x = ActivityRegularizationLayer()(x)
x = layers.Dense(64, activation="relu", name="dense_2")(x)
outputs = layers.Dense(10, name="predictions")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
h = model.fit(x_train, y_train, batch_size=64, epochs=1, shuffle=False, verbose=0)
print("add_loss", np.round(h.history["loss"], 3).tolist())

model = get_compiled_model()
h = model.fit(x_train, y_train, batch_size=64, validation_split=0.2, epochs=1, shuffle=False, verbose=0)
print("validation_split", sorted(h.history))

train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64)
test_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)
model = get_compiled_model()
h = model.fit(train_dataset, epochs=2, verbose=0)
print("dataset fit", {k: np.round(v, 4).tolist() for k, v in h.history.items()})
print("dataset eval", np.round(model.evaluate(test_dataset, verbose=0), 4).tolist())
model = get_compiled_model()
h = model.fit(train_dataset.repeat(), epochs=2, steps_per_epoch=3, verbose=0)
print("steps_per_epoch", np.round(h.history["loss"], 4).tolist())

class_weight = {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 2.0, 6: 1.0, 7: 1.0, 8: 1.0, 9: 1.0}
model = get_compiled_model()
h = model.fit(x_train, y_train, class_weight=class_weight, batch_size=64, epochs=1, shuffle=False, verbose=0)
print("class_weight", np.round(h.history["loss"], 4).tolist())
sample_weight = np.ones(shape=(len(y_train),))
sample_weight[y_train == 5] = 2.0
model = get_compiled_model()
h = model.fit(x_train, y_train, sample_weight=sample_weight, batch_size=64, epochs=1, shuffle=False, verbose=0)
print("sample_weight", np.round(h.history["loss"], 4).tolist())

model = get_compiled_model()
callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=2, verbose=1)]
h = model.fit(x_train, y_train, epochs=20, batch_size=64, callbacks=callbacks, validation_split=0.2, shuffle=False, verbose=0)
print("early stop epochs", len(h.history["loss"]))

initial_learning_rate = 0.1
lr_schedule = keras.optimizers.schedules.ExponentialDecay(initial_learning_rate, decay_steps=100000, decay_rate=0.96, staircase=True)
optimizer = keras.optimizers.RMSprop(learning_rate=lr_schedule)
print(float(lr_schedule(100000)), float(optimizer.learning_rate))

class LossHistory(keras.callbacks.Callback):
    def on_train_begin(self, logs):
        self.per_batch_losses = []
    def on_batch_end(self, batch, logs):
        self.per_batch_losses.append(logs.get("loss"))
lh = LossHistory()
model = get_compiled_model()
model.fit(x_train, y_train, epochs=1, batch_size=100, callbacks=[lh], shuffle=False, verbose=0)
print("per batch", len(lh.per_batch_losses), round(float(lh.per_batch_losses[-1]), 4))
print("training guide done")

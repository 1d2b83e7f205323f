# TF guide "Mixed precision", as written but for the data (seeded random stand-ins for MNIST,
# smaller, so it runs in seconds on a CPU), the GPU check and Keras 3's spellings (a
# KerasTensor's and a Keras variable's dtype is a string: `x.dtype`, not `x.dtype.name`; an
# ndflow Keras variable's is the DType, so that line reads it through tf.as_dtype; the
# LossScaleOptimizer scales with `scale_loss` and unscales in `apply_gradients` - ndflow keeps
# Keras 2's get_scaled_loss/get_unscaled_gradients too). The output equals TF 2.21's but for
# the float16 steps' losses and accuracies: both libraries' float16 matmuls accumulate in
# float32 and round, in other orders, so ~0.2% of float16 results round the other way (with
# the float32 policy the whole output is TF's).
import numpy as np
import ndflow as tf

from ndflow import keras
from ndflow.keras import layers
from ndflow.keras import mixed_precision

keras.utils.set_random_seed(0)
policy = mixed_precision.Policy('mixed_float16')
mixed_precision.set_global_policy(policy)
# Equivalent to the two lines above
mixed_precision.set_global_policy('mixed_float16')
print('Compute dtype: %s' % policy.compute_dtype)
print('Variable dtype: %s' % policy.variable_dtype)

inputs = keras.Input(shape=(784,), name='digits')
print('The model will run with 64 units on a CPU')
num_units = 64
dense1 = layers.Dense(num_units, activation='relu', name='dense_1')
x = dense1(inputs)
dense2 = layers.Dense(num_units, activation='relu', name='dense_2')
x = dense2(x)
print(dense1.dtype_policy)
print('x.dtype: %s' % x.dtype)
print('dense1.kernel.dtype: %s' % tf.as_dtype(dense1.kernel.dtype).name)
# INCORRECT: softmax and model output will be float16, when it should be float32
outputs = layers.Dense(10, activation='softmax', name='predictions')(x)
print('Outputs dtype: %s' % outputs.dtype)
# CORRECT: softmax and model output are float32
x = layers.Dense(10, name='dense_logits')(x)
outputs = layers.Activation('softmax', dtype='float32', name='predictions')(x)
print('Outputs dtype: %s' % outputs.dtype)
outputs = layers.Activation('linear', dtype='float32')(outputs)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(loss='sparse_categorical_crossentropy',
              optimizer=keras.optimizers.RMSprop(),
              metrics=['accuracy'])

rng = np.random.default_rng(0)
x_train = rng.integers(0, 256, (4096, 28, 28)).astype(np.uint8)
y_train = rng.integers(0, 10, 4096).astype(np.uint8)
x_test = rng.integers(0, 256, (1024, 28, 28)).astype(np.uint8)
y_test = rng.integers(0, 10, 1024).astype(np.uint8)
x_train = x_train.reshape(4096, 784).astype('float32') / 255
x_test = x_test.reshape(1024, 784).astype('float32') / 255
initial_weights = model.get_weights()
print([w.dtype.name for w in initial_weights])
history = model.fit(x_train, y_train, batch_size=512, epochs=2, validation_split=0.2,
                    verbose=2)
print(sorted(history.history))
test_scores = model.evaluate(x_test, y_test, verbose=0)
print('Test loss: %.3f' % test_scores[0])
print('Test accuracy: %.3f' % test_scores[1])

x = tf.constant(256, dtype='float16')
print((x ** 2).numpy())  # Overflow
x = tf.constant(1e-5, dtype='float16')
print((x ** 2).numpy())  # Underflow

optimizer = keras.optimizers.RMSprop()
optimizer = mixed_precision.LossScaleOptimizer(optimizer)
print(type(optimizer).__name__, float(optimizer.dynamic_growth_steps),
      float(optimizer.initial_scale))
print(hasattr(optimizer, 'scale_loss'))

loss_object = tf.keras.losses.SparseCategoricalCrossentropy()
train_dataset = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
                 .shuffle(10000, seed=1).batch(512))
test_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(512)


# Keras 3's LossScaleOptimizer has scale_loss (Keras 2's get_scaled_loss and
# get_unscaled_gradients are gone): apply_gradients unscales
@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x)
        loss = loss_object(y, predictions)
        scaled_loss = optimizer.scale_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(scaled_gradients, model.trainable_variables))
    return loss


@tf.function
def test_step(x):
    return model(x, training=False)


model.set_weights(initial_weights)
for epoch in range(2):
    epoch_loss_avg = tf.keras.metrics.Mean()
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name='test_accuracy')
    for x, y in train_dataset:
        loss = train_step(x, y)
        epoch_loss_avg(loss)
    for x, y in test_dataset:
        predictions = test_step(x)
        test_accuracy.update_state(y, predictions)
    print('Epoch {}: loss={:.4f}, test accuracy={:.4f}'.format(
        epoch, float(epoch_loss_avg.result()), float(test_accuracy.result())))
print('loss scale', float(optimizer.scale_loss(tf.constant(1.0))))
print('dtypes', loss.dtype.name, predictions.dtype.name)
print("mixed precision guide done")

# TF tutorial "Basic regression: Predict fuel efficiency" (numpy stand-in for the pandas frame)
# Adapted: NumPy arrays stand in for the Auto MPG pandas DataFrame.
import numpy as np
import ndflow as tf
from ndflow.keras import layers
rng = np.random.default_rng(1)
train_features = rng.normal(size=(200, 9)).astype(np.float32) * 10 + 50
train_labels = train_features @ rng.normal(size=9).astype(np.float32) * 0.1
test_features, test_labels = train_features[:40], train_labels[:40]
normalizer = tf.keras.layers.Normalization(axis=-1)
normalizer.adapt(np.array(train_features))
print(normalizer.mean.numpy())
first = np.array(train_features[:1])
with np.printoptions(precision=2, suppress=True):
  print('First example:', first)
  print('Normalized:', normalizer(first).numpy())
horsepower = np.array(train_features[:, 3])
horsepower_normalizer = layers.Normalization(input_shape=[1,], axis=None)
horsepower_normalizer.adapt(horsepower)
horsepower_model = tf.keras.Sequential([horsepower_normalizer, layers.Dense(units=1)])
horsepower_model.summary()
horsepower_model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=0.1),
                         loss='mean_absolute_error')
history = horsepower_model.fit(train_features[:, 3], train_labels, epochs=5, verbose=0,
                               validation_split = 0.2)
print(history.history['loss'][-1], history.history['val_loss'][-1], history.epoch)
def build_and_compile_model(norm):
  model = tf.keras.Sequential([
      norm,
      layers.Dense(64, activation='relu'),
      layers.Dense(64, activation='relu'),
      layers.Dense(1)
  ])
  model.compile(loss='mean_absolute_error',
                optimizer=tf.keras.optimizers.Adam(0.001))
  return model
dnn_model = build_and_compile_model(normalizer)
dnn_model.fit(train_features, train_labels, validation_split=0.2, verbose=0, epochs=3)
test_results = {}
test_results['dnn_model'] = dnn_model.evaluate(test_features, test_labels, verbose=0)
test_predictions = dnn_model.predict(test_features).flatten()
dnn_model.save('dnn_model.keras')
reloaded = tf.keras.models.load_model('dnn_model.keras')
np.testing.assert_allclose(reloaded.predict(test_features).flatten(), test_predictions, rtol=1e-5)
print(test_results)

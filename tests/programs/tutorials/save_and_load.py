# TF tutorial "Save and load models"
# Adapted: random data for MNIST; `os.makedirs` before the epoch-0 save_weights (TF 2.21 cannot write into a missing directory either).
import os, numpy as np
import ndflow as tf
rng = np.random.default_rng(2)
train_images = rng.random((100, 784)).astype(np.float32); train_labels = rng.integers(0, 10, 100)
test_images, test_labels = train_images[:20], train_labels[:20]
def create_model():
  model = tf.keras.Sequential([
    tf.keras.layers.Dense(512, activation='relu', input_shape=(784,)),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(10)
  ])
  model.compile(optimizer='adam',
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=[tf.keras.metrics.SparseCategoricalAccuracy()])
  return model
model = create_model()
model.summary()
checkpoint_path = "training_1/cp.weights.h5"
checkpoint_dir = os.path.dirname(checkpoint_path)
cp_callback = tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_path,
                                                 save_weights_only=True,
                                                 verbose=1)
model.fit(train_images, train_labels, epochs=2,
          validation_data=(test_images, test_labels),
          callbacks=[cp_callback])
print(os.listdir(checkpoint_dir))
model = create_model()
loss, acc = model.evaluate(test_images, test_labels, verbose=2)
print("Untrained model, accuracy: {:5.2f}%".format(100 * acc))
model.load_weights(checkpoint_path)
loss, acc = model.evaluate(test_images, test_labels, verbose=2)
print("Restored model, accuracy: {:5.2f}%".format(100 * acc))
checkpoint_path = "training_2/cp-{epoch:04d}.weights.h5"
batch_size = 32
n_batches = len(train_images) / batch_size
n_batches = int(np.ceil(n_batches))
cp_callback = tf.keras.callbacks.ModelCheckpoint(
    filepath=checkpoint_path, verbose=1, save_weights_only=True, save_freq=2*n_batches)
model = create_model()
os.makedirs("training_2", exist_ok=True); model.save_weights(checkpoint_path.format(epoch=0))
model.fit(train_images, train_labels, epochs=4, batch_size=batch_size, callbacks=[cp_callback],
          validation_data=(test_images, test_labels), verbose=0)
print(sorted(os.listdir("training_2")))
model = create_model()
model.fit(train_images, train_labels, epochs=2)
model.save('my_model.keras')
new_model = tf.keras.models.load_model('my_model.keras')
new_model.summary()
loss, acc = new_model.evaluate(test_images, test_labels, verbose=2)
print(new_model.predict(test_images).shape)
model.save('my_model.h5')
new_model = tf.keras.models.load_model('my_model.h5')
new_model.summary()

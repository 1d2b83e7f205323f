# TF tutorial "Basic classification: Classify images of clothing", as written (data: small random stand-in)
# Adapted: random 28x28 images stand in for Fashion-MNIST.
import numpy as np
import ndflow as tf
rng = np.random.default_rng(0)
train_images = rng.integers(0, 255, (256, 28, 28)).astype(np.uint8)
train_labels = rng.integers(0, 10, 256).astype(np.uint8)
test_images, test_labels = train_images[:64], train_labels[:64]
class_names = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat',
               'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot']
train_images = train_images / 255.0
test_images = test_images / 255.0
model = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(128, activation='relu'),
    tf.keras.layers.Dense(10)
])
model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])
model.fit(train_images, train_labels, epochs=2)
test_loss, test_acc = model.evaluate(test_images,  test_labels, verbose=2)
print('\nTest accuracy:', test_acc)
probability_model = tf.keras.Sequential([model, tf.keras.layers.Softmax()])
predictions = probability_model.predict(test_images)
print(predictions[0], np.argmax(predictions[0]), test_labels[0])
img = test_images[1]
img = (np.expand_dims(img,0))
predictions_single = probability_model.predict(img)
print(np.argmax(predictions_single[0]))
model.summary()

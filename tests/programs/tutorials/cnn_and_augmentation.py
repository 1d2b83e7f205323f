# TF tutorials "Convolutional Neural Network (CIFAR-10)" and "Data augmentation" / "Image classification"
# Adapted: random images stand in for CIFAR-10 and a small JPEG folder for the flowers.
import numpy as np
import ndflow as tf
from ndflow.keras import datasets, layers, models
rng = np.random.default_rng(3)
train_images = rng.integers(0, 255, (128, 32, 32, 3)).astype(np.uint8)
train_labels = rng.integers(0, 10, (128, 1)).astype(np.uint8)
test_images, test_labels = train_images[:32], train_labels[:32]
train_images, test_images = train_images / 255.0, test_images / 255.0
model = models.Sequential()
model.add(layers.Conv2D(32, (3, 3), activation='relu', input_shape=(32, 32, 3)))
model.add(layers.MaxPooling2D((2, 2)))
model.add(layers.Conv2D(64, (3, 3), activation='relu'))
model.add(layers.MaxPooling2D((2, 2)))
model.add(layers.Conv2D(64, (3, 3), activation='relu'))
model.summary()
model.add(layers.Flatten())
model.add(layers.Dense(64, activation='relu'))
model.add(layers.Dense(10))
model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])
history = model.fit(train_images, train_labels, epochs=2,
                    validation_data=(test_images, test_labels))
test_loss, test_acc = model.evaluate(test_images,  test_labels, verbose=2)
print(history.history['accuracy'], history.history['val_accuracy'], test_acc)

# image classification tutorial (flowers), with a small directory of PNGs
import os, pathlib, PIL.Image
data_dir = pathlib.Path("flower_photos")
for c in ["daisy", "roses", "tulips"]:
    (data_dir / c).mkdir(parents=True, exist_ok=True)
    for i in range(12):
        PIL.Image.fromarray(rng.integers(0, 255, (40, 50, 3)).astype(np.uint8)).save(data_dir / c / f"{i}.jpg")
image_count = len(list(data_dir.glob('*/*.jpg')))
print(image_count)
batch_size = 8
img_height = 30
img_width = 30
train_ds = tf.keras.utils.image_dataset_from_directory(
  data_dir, validation_split=0.2, subset="training", seed=123,
  image_size=(img_height, img_width), batch_size=batch_size)
val_ds = tf.keras.utils.image_dataset_from_directory(
  data_dir, validation_split=0.2, subset="validation", seed=123,
  image_size=(img_height, img_width), batch_size=batch_size)
class_names = train_ds.class_names
print(class_names)
for image_batch, labels_batch in train_ds:
  print(image_batch.shape)
  print(labels_batch.shape)
  break
AUTOTUNE = tf.data.AUTOTUNE
train_ds = train_ds.cache().shuffle(1000).prefetch(buffer_size=AUTOTUNE)
val_ds = val_ds.cache().prefetch(buffer_size=AUTOTUNE)
normalization_layer = layers.Rescaling(1./255)
normalized_ds = train_ds.map(lambda x, y: (normalization_layer(x), y))
image_batch, labels_batch = next(iter(normalized_ds))
first_image = image_batch[0]
print(np.min(first_image), np.max(first_image))
num_classes = len(class_names)
data_augmentation = tf.keras.Sequential(
  [
    layers.RandomFlip("horizontal",
                      input_shape=(img_height,
                                  img_width,
                                  3)),
    layers.RandomRotation(0.1),
    layers.RandomZoom(0.1),
  ]
)
model = tf.keras.Sequential([
  data_augmentation,
  layers.Rescaling(1./255),
  layers.Conv2D(16, 3, padding='same', activation='relu'),
  layers.MaxPooling2D(),
  layers.Conv2D(32, 3, padding='same', activation='relu'),
  layers.MaxPooling2D(),
  layers.Dropout(0.2),
  layers.Flatten(),
  layers.Dense(128, activation='relu'),
  layers.Dense(num_classes, name="outputs")
])
model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])
model.summary()
epochs = 2
history = model.fit(train_ds, validation_data=val_ds, epochs=epochs)
acc = history.history['accuracy']
val_acc = history.history['val_accuracy']
img = tf.keras.utils.load_img(data_dir / "roses" / "0.jpg", target_size=(img_height, img_width))
img_array = tf.keras.utils.img_to_array(img)
img_array = tf.expand_dims(img_array, 0) # Create a batch
predictions = model.predict(img_array)
score = tf.nn.softmax(predictions[0])
print("This image most likely belongs to {} with a {:.2f} percent confidence."
    .format(class_names[np.argmax(score)], 100 * np.max(score)))
# data augmentation tutorial: resize_and_rescale + dataset map
resize_and_rescale = tf.keras.Sequential([
  layers.Resizing(24, 24),
  layers.Rescaling(1./255)
])
aug_ds = train_ds.map(lambda x, y: (resize_and_rescale(x, training=True), y))
image = tf.image.flip_left_right(first_image)
image = tf.image.rgb_to_grayscale(first_image)
image = tf.image.adjust_saturation(first_image, 3)
image = tf.image.adjust_brightness(first_image, 0.4)
image = tf.image.central_crop(first_image, central_fraction=0.5)
image = tf.image.rot90(first_image)
seed = (1, 2)
image = tf.image.stateless_random_brightness(first_image, max_delta=0.95, seed=seed)
image = tf.image.stateless_random_contrast(first_image, lower=0.1, upper=0.9, seed=seed)
image = tf.image.stateless_random_crop(first_image, size=[10, 10, 3], seed=seed)
rng2 = tf.random.Generator.from_seed(123, alg='philox')
def augment(image_label, seed):
  image, label = image_label
  image = tf.image.resize_with_crop_or_pad(image, 34, 34)
  new_seed = tf.random.split(seed, num=1)[0, :]
  image = tf.image.stateless_random_crop(image, size=[30, 30, 3], seed=seed)
  image = tf.image.stateless_random_brightness(image, max_delta=0.5, seed=new_seed)
  image = tf.clip_by_value(image, 0, 1)
  return image, label
def f(x, y):
  seed = rng2.make_seeds(1)[:, 0]
  image, label = augment((x, y), seed)
  return image, label
ds = tf.data.Dataset.from_tensor_slices((train_images[:16, :30, :30], train_labels[:16])).shuffle(16).map(f, num_parallel_calls=AUTOTUNE).batch(4).prefetch(AUTOTUNE)
for x, y in ds: print(x.shape, y.shape)

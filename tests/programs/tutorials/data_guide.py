# TF guide "tf.data: Build TensorFlow input pipelines" (site/en/guide/data.ipynb), as written.
# Adapted (no downloads, no display): seeded local stand-ins of the same shape replace the
# downloaded files (Fashion-MNIST arrays, flower_photos JPEGs written by tf.io.encode_jpeg, the
# FSNS TFRecord file, the three Iliad translations, titanic train.csv, creditcard.csv), all
# smaller; `print(...)` shows what the notebook displays (bare expressions, plots, images);
# a dict of numpy columns stands in for pandas' DataFrame and np.rot90 for
# scipy.ndimage.rotate (neither is installed); the ImageDataGenerator cells are left out
# (Keras 3, which TF 2.21 uses, has no tf.keras.preprocessing.image.ImageDataGenerator);
# Keras prints one line an epoch (verbose=2) and no progress bars.
# The output equals TF 2.21's but for: the SparseTensor class's module; timings; the
# rejection_resample batches after the first few (TF's own vary from run to run: its two
# readers of the shuffled CSV take their seeds in thread order); the last digits of the
# first evaluate's loss (summation order); the second evaluate's numbers (TF's prefetching
# iterator in the fit on `.repeat()` reads a batch past the last step, so the shuffle
# gives the next iterator other seeds; ndflow's Keras does not read ahead).
import csv
import os
import pathlib

import numpy as np
import ndflow as tf

np.set_printoptions(precision=4)
tf.keras.utils.set_random_seed(0)

# -- the stand-ins for the downloads -----------------------------------------------------------
rng = np.random.default_rng(0)


def fashion_mnist_load_data():
    images = rng.integers(0, 256, size=(640, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=(640,), dtype=np.uint8)
    return (images, labels), (images[:64], labels[:64])


flowers = 'flower_photos'
for k, name in enumerate(['daisy', 'dandelion', 'roses', 'sunflowers', 'tulips']):
    os.makedirs(os.path.join(flowers, name), exist_ok=True)
    for j in range(3):
        pixels = rng.integers(0, 256, size=(24 + 8 * j, 32, 3), dtype=np.uint8)
        jpeg = tf.io.encode_jpeg(tf.constant(pixels))
        tf.io.write_file(os.path.join(flowers, name, f'{100 * k + j}_photo.jpg'), jpeg)

fsns_test_file = 'fsns.tfrec'
with tf.io.TFRecordWriter(fsns_test_file) as writer:
    for j, text in enumerate([b'Rue de la Paix', b'Avenue Foch', b'Boulevard Voltaire']):
        pixels = rng.integers(0, 256, size=(15, 60, 3), dtype=np.uint8)
        png = tf.io.encode_png(tf.constant(pixels)).numpy()
        example = tf.train.Example(features=tf.train.Features(feature={
            'image/encoded': tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
            'image/text': tf.train.Feature(bytes_list=tf.train.BytesList(value=[text])),
            'image/width': tf.train.Feature(int64_list=tf.train.Int64List(value=[60]))}))
        writer.write(example.SerializeToString())

file_names = ['cowper.txt', 'derby.txt', 'butler.txt']
words = ['wrath', 'Achilles', 'Greeks', 'Troy', 'ships', 'gods', 'spear', 'shield', 'Hector',
         'sing', 'Muse', 'of', 'the', 'and', 'to', 'his']
file_paths = []
for name in file_names:
    with open(name, 'w') as f:
        for i in range(12):
            f.write(name[:-4].upper() + ': ' + ' '.join(rng.choice(words, 6)) + '\n')
    file_paths.append(name)

titanic_file = 'train.csv'
with open(titanic_file, 'w') as f:
    f.write('survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n')
    for i in range(627):
        f.write('{},{},{:.1f},{},{},{:.4f},{},{},{},{}\n'.format(
            rng.integers(0, 2), rng.choice(['male', 'female']), float(rng.integers(1, 70)),
            rng.integers(0, 3), rng.integers(0, 3), rng.uniform(5, 100),
            rng.choice(['First', 'Second', 'Third']), rng.choice(['unknown', 'A', 'B', 'C']),
            rng.choice(['Southampton', 'Cherbourg', 'Queenstown']), rng.choice(['y', 'n'])))

csv_path = 'creditcard.csv'
with open(csv_path, 'w') as f:
    f.write(','.join(['Time'] + [f'V{i}' for i in range(1, 29)] + ['Amount', 'Class']) + '\n')
    for i in range(400):
        values = [float(i)] + list(np.round(rng.normal(size=28), 6)) + [
            round(float(rng.uniform(0, 200)), 2)]
        f.write(','.join(str(v) for v in values) + ',' + str(int(rng.uniform() < 0.05)) + '\n')

# -- Basic mechanics ---------------------------------------------------------------------------
dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
print(dataset)
for elem in dataset:
    print(elem.numpy())
it = iter(dataset)

print(next(it).numpy())
print(dataset.reduce(0, lambda state, value: state + value).numpy())

# -- Dataset structure -------------------------------------------------------------------------
dataset1 = tf.data.Dataset.from_tensor_slices(tf.random.uniform([4, 10]))

print(dataset1.element_spec)
dataset2 = tf.data.Dataset.from_tensor_slices(
   (tf.random.uniform([4]),
    tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))

print(dataset2.element_spec)
dataset3 = tf.data.Dataset.zip((dataset1, dataset2))

print(dataset3.element_spec)
# Dataset containing a sparse tensor.
dataset4 = tf.data.Dataset.from_tensors(tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4]))

print(dataset4.element_spec)
# Use value_type to see the type of value represented by the element spec
print(dataset4.element_spec.value_type)
dataset1 = tf.data.Dataset.from_tensor_slices(
    tf.random.uniform([4, 10], minval=1, maxval=10, dtype=tf.int32))

print(dataset1)
for z in dataset1:
    print(z.numpy())
dataset2 = tf.data.Dataset.from_tensor_slices(
   (tf.random.uniform([4]),
    tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))

print(dataset2)
dataset3 = tf.data.Dataset.zip((dataset1, dataset2))

print(dataset3)
for a, (b, c) in dataset3:
    print('shapes: {a.shape}, {b.shape}, {c.shape}'.format(a=a, b=b, c=c))

# -- Reading input data: NumPy arrays ----------------------------------------------------------
train, test = fashion_mnist_load_data()
images, labels = train
images = images/255

dataset = tf.data.Dataset.from_tensor_slices((images, labels))
print(dataset)


# -- Python generators -------------------------------------------------------------------------
def count(stop):
    i = 0
    while i<stop:
        yield i
        i += 1


for n in count(5):
    print(n)
ds_counter = tf.data.Dataset.from_generator(count, args=[25], output_types=tf.int32, output_shapes = (), )
for count_batch in ds_counter.repeat().batch(10).take(10):
    print(count_batch.numpy())


def gen_series():
    i = 0
    while True:
        size = np.random.randint(0, 10)
        yield i, np.random.normal(size=(size,))
        i += 1


for i, series in gen_series():
    print(i, ":", str(series))
    if i > 5:
        break
ds_series = tf.data.Dataset.from_generator(
    gen_series,
    output_types=(tf.int32, tf.float32),
    output_shapes=((), (None,)))

print(ds_series)
ds_series_batch = ds_series.shuffle(20).padded_batch(10)

ids, sequence_batch = next(iter(ds_series_batch))
print(ids.numpy())
print()
print(sequence_batch.numpy())

# -- TFRecord data -----------------------------------------------------------------------------
dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])
print(dataset)
raw_example = next(iter(dataset))
parsed = tf.train.Example.FromString(raw_example.numpy())

print(parsed.features.feature['image/text'])

# -- Text data ---------------------------------------------------------------------------------
dataset = tf.data.TextLineDataset(file_paths)
for line in dataset.take(5):
    print(line.numpy())
files_ds = tf.data.Dataset.from_tensor_slices(file_paths)
lines_ds = files_ds.interleave(tf.data.TextLineDataset, cycle_length=3)

for i, line in enumerate(lines_ds.take(9)):
    if i % 3 == 0:
        print()
    print(line.numpy())
titanic_lines = tf.data.TextLineDataset(titanic_file)
for line in titanic_lines.take(10):
    print(line.numpy())


def survived(line):
    return tf.not_equal(tf.strings.substr(line, 0, 1), "0")


survivors = titanic_lines.skip(1).filter(survived)
for line in survivors.take(10):
    print(line.numpy())

# -- CSV data ----------------------------------------------------------------------------------
# pd.read_csv's columns: int64, float64 or object (str) arrays
with open(titanic_file) as f:
    rows = list(csv.reader(f))
df = {}
for j, key in enumerate(rows[0]):
    column = [r[j] for r in rows[1:]]
    for kind in (np.int64, np.float64, object):
        try:
            df[key] = np.array(column).astype(kind)
            break
        except ValueError:
            pass
print({key: value[:5] for key, value in df.items()})
titanic_slices = tf.data.Dataset.from_tensor_slices(dict(df))

for feature_batch in titanic_slices.take(1):
    for key, value in feature_batch.items():
        print("  {!r:20s}: {}".format(key, value))
titanic_batches = tf.data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived")
for feature_batch, label_batch in titanic_batches.take(1):
    print("'survived': {}".format(label_batch))
    print("features:")
    for key, value in feature_batch.items():
        print("  {!r:20s}: {}".format(key, value))
titanic_batches = tf.data.experimental.make_csv_dataset(
    titanic_file, batch_size=4,
    label_name="survived", select_columns=['class', 'fare', 'survived'])
for feature_batch, label_batch in titanic_batches.take(1):
    print("'survived': {}".format(label_batch))
    for key, value in feature_batch.items():
        print("  {!r:20s}: {}".format(key, value))
titanic_types  = [tf.int32, tf.string, tf.float32, tf.int32, tf.int32, tf.float32, tf.string, tf.string, tf.string, tf.string]
dataset = tf.data.experimental.CsvDataset(titanic_file, titanic_types , header=True)

for line in dataset.take(10):
    print([item.numpy() for item in line])
with open('missing.csv', 'w') as f:
    f.write('1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n')
# Creates a dataset that reads all of the records from two CSV files, each with
# four float columns which may have missing values.

record_defaults = [999,999,999,999]
dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults)
dataset = dataset.map(lambda *items: tf.stack(items))
print(dataset)
for line in dataset:
    print(line.numpy())
# Creates a dataset that reads all of the records from two CSV files with
# headers, extracting float data from columns 2 and 4.
record_defaults = [999, 999] # Only provide defaults for the selected columns
dataset = tf.data.experimental.CsvDataset("missing.csv", record_defaults, select_cols=[1, 3])
dataset = dataset.map(lambda *items: tf.stack(items))
print(dataset)
for line in dataset:
    print(line.numpy())

# -- Sets of files -----------------------------------------------------------------------------
flowers_root = pathlib.Path(flowers)
for item in sorted(flowers_root.glob("*")):
    print(item.name)
list_ds = tf.data.Dataset.list_files(str(flowers_root/'*/*'))

for f in list_ds.take(5):
    print(f.numpy())


def process_path(file_path):
    label = tf.strings.split(file_path, os.sep)[-2]
    return tf.io.read_file(file_path), label


labeled_ds = list_ds.map(process_path)
for image_raw, label_text in labeled_ds.take(1):
    print(repr(image_raw.numpy()[:100]))
    print()
    print(label_text.numpy())

# -- Batching dataset elements -----------------------------------------------------------------
inc_dataset = tf.data.Dataset.range(100)
dec_dataset = tf.data.Dataset.range(0, -100, -1)
dataset = tf.data.Dataset.zip((inc_dataset, dec_dataset))
batched_dataset = dataset.batch(4)

for batch in batched_dataset.take(4):
    print([arr.numpy() for arr in batch])
print(batched_dataset)
batched_dataset = dataset.batch(7, drop_remainder=True)
print(batched_dataset)
dataset = tf.data.Dataset.range(100)
dataset = dataset.map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
dataset = dataset.padded_batch(4, padded_shapes=(None,))

for batch in dataset.take(2):
    print(batch.numpy())
    print()


# -- Training workflows: multiple epochs -------------------------------------------------------
def plot_batch_sizes(ds):
    batch_sizes = [batch.shape[0] for batch in ds]
    print('Batch sizes:', batch_sizes)


titanic_batches = titanic_lines.repeat(3).batch(128)
plot_batch_sizes(titanic_batches)
titanic_batches = titanic_lines.batch(128).repeat(3)

plot_batch_sizes(titanic_batches)
epochs = 3
dataset = titanic_lines.batch(128)

for epoch in range(epochs):
    for batch in dataset:
        print(batch.shape)
    print("End of epoch: ", epoch)

# -- Randomly shuffling input data -------------------------------------------------------------
lines = tf.data.TextLineDataset(titanic_file)
counter = tf.data.experimental.Counter()

dataset = tf.data.Dataset.zip((counter, lines))
dataset = dataset.shuffle(buffer_size=100)
dataset = dataset.batch(20)
print(dataset)
n,line_batch = next(iter(dataset))
print(n.numpy())
dataset = tf.data.Dataset.zip((counter, lines))
shuffled = dataset.shuffle(buffer_size=100).batch(10).repeat(2)

print("Here are the item ID's near the epoch boundary:\n")
for n, line_batch in shuffled.skip(60).take(5):
    print(n.numpy())
shuffle_repeat = [n.numpy().mean() for n, line_batch in shuffled]
print("shuffle().repeat()", np.array(shuffle_repeat))
dataset = tf.data.Dataset.zip((counter, lines))
shuffled = dataset.repeat(2).shuffle(buffer_size=100).batch(10)

print("Here are the item ID's near the epoch boundary:\n")
for n, line_batch in shuffled.skip(55).take(15):
    print(n.numpy())
repeat_shuffle = [n.numpy().mean() for n, line_batch in shuffled]
print("repeat().shuffle()", np.array(repeat_shuffle))

# -- Preprocessing data: decoding image data ---------------------------------------------------
list_ds = tf.data.Dataset.list_files(str(flowers_root/'*/*'))


# Reads an image from a file, decodes it into a dense tensor, and resizes it
# to a fixed shape.
def parse_image(filename):
    parts = tf.strings.split(filename, os.sep)
    label = parts[-2]

    image = tf.io.read_file(filename)
    image = tf.io.decode_jpeg(image)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.resize(image, [128, 128])
    return image, label


file_path = next(iter(list_ds))
image, label = parse_image(file_path)


def show(image, label):
    print(label.numpy().decode('utf-8'), image.shape, np.asarray(image)[60:62, 60:62, 0])


show(image, label)
images_ds = list_ds.map(parse_image)

for image, label in images_ds.take(2):
    show(image, label)


# Reseeded: how many elements TF's generator pipeline above read (so NumPy's state here)
# varies between TF runs (its prefetching thread may read one more)
np.random.seed(1)


@tf.py_function(Tout=tf.float32)
def random_rotate_image(image):
    image = np.rot90(image, np.random.randint(1, 4))
    return image


image, label = next(iter(images_ds))
image = random_rotate_image(image)
show(image, label)


def tf_random_rotate_image(image, label):
    im_shape = image.shape
    image = random_rotate_image(image)
    image.set_shape(im_shape)
    return image, label


rot_ds = images_ds.map(tf_random_rotate_image)

for image, label in rot_ds.take(2):
    show(image, label)

# -- Parsing tf.Example protocol buffer messages -----------------------------------------------
dataset = tf.data.TFRecordDataset(filenames = [fsns_test_file])
print(dataset)
raw_example = next(iter(dataset))
parsed = tf.train.Example.FromString(raw_example.numpy())

feature = parsed.features.feature
raw_img = feature['image/encoded'].bytes_list.value[0]
img = tf.image.decode_png(raw_img)
print(img.shape, feature["image/text"].bytes_list.value[0])
raw_example = next(iter(dataset))


def tf_parse(eg):
    example = tf.io.parse_example(
        eg[tf.newaxis], {
            'image/encoded': tf.io.FixedLenFeature(shape=(), dtype=tf.string),
            'image/text': tf.io.FixedLenFeature(shape=(), dtype=tf.string)
        })
    return example['image/encoded'][0], example['image/text'][0]


img, txt = tf_parse(raw_example)
print(txt.numpy())
print(repr(img.numpy()[:20]), "...")
decoded = dataset.map(tf_parse)
print(decoded)
image_batch, text_batch = next(iter(decoded.batch(10)))
print(image_batch.shape)

# -- Time series windowing ---------------------------------------------------------------------
range_ds = tf.data.Dataset.range(100000)
batches = range_ds.batch(10, drop_remainder=True)

for batch in batches.take(5):
    print(batch.numpy())


def dense_1_step(batch):
    # Shift features and labels one step relative to each other.
    return batch[:-1], batch[1:]


predict_dense_1_step = batches.map(dense_1_step)

for features, label in predict_dense_1_step.take(3):
    print(features.numpy(), " => ", label.numpy())
batches = range_ds.batch(15, drop_remainder=True)


def label_next_5_steps(batch):
    return (batch[:-5],   # Inputs: All except the last 5 steps
            batch[-5:])   # Labels: The last 5 steps


predict_5_steps = batches.map(label_next_5_steps)

for features, label in predict_5_steps.take(3):
    print(features.numpy(), " => ", label.numpy())
feature_length = 10
label_length = 3

features = range_ds.batch(feature_length, drop_remainder=True)
labels = range_ds.batch(feature_length).skip(1).map(lambda labels: labels[:label_length])

predicted_steps = tf.data.Dataset.zip((features, labels))

for features, label in predicted_steps.take(5):
    print(features.numpy(), " => ", label.numpy())
window_size = 5

windows = range_ds.window(window_size, shift=1)
for sub_ds in windows.take(5):
    print(sub_ds)
for x in windows.flat_map(lambda x: x).take(30):
    print(x.numpy(), end=' ')
print()


def sub_to_batch(sub):
    return sub.batch(window_size, drop_remainder=True)


for example in windows.flat_map(sub_to_batch).take(5):
    print(example.numpy())


def make_window_dataset(ds, window_size=5, shift=1, stride=1):
    windows = ds.window(window_size, shift=shift, stride=stride)

    def sub_to_batch(sub):
        return sub.batch(window_size, drop_remainder=True)

    windows = windows.flat_map(sub_to_batch)
    return windows


ds = make_window_dataset(range_ds, window_size=10, shift = 5, stride=3)

for example in ds.take(10):
    print(example.numpy())
dense_labels_ds = ds.map(dense_1_step)

for inputs,labels in dense_labels_ds.take(3):
    print(inputs.numpy(), "=>", labels.numpy())

# -- Resampling --------------------------------------------------------------------------------
creditcard_ds = tf.data.experimental.make_csv_dataset(
    csv_path, batch_size=1024, label_name="Class",
    # Set the column types: 30 floats and an int.
    column_defaults=[float()]*30+[int()])


def count(counts, batch):
    features, labels = batch
    class_1 = labels == 1
    class_1 = tf.cast(class_1, tf.int32)

    class_0 = labels == 0
    class_0 = tf.cast(class_0, tf.int32)

    counts['class_0'] += tf.reduce_sum(class_0)
    counts['class_1'] += tf.reduce_sum(class_1)

    return counts


counts = creditcard_ds.take(10).reduce(
    initial_state={'class_0': 0, 'class_1': 0},
    reduce_func = count)

counts = np.array([counts['class_0'].numpy(),
                   counts['class_1'].numpy()]).astype(np.float32)

fractions = counts/counts.sum()
print(fractions)
negative_ds = (
  creditcard_ds
    .unbatch()
    .filter(lambda features, label: label==0)
    .repeat())
positive_ds = (
  creditcard_ds
    .unbatch()
    .filter(lambda features, label: label==1)
    .repeat())
for features, label in positive_ds.batch(10).take(1):
    print(label.numpy())
balanced_ds = tf.data.Dataset.sample_from_datasets(
    [negative_ds, positive_ds], [0.5, 0.5]).batch(10)
for features, labels in balanced_ds.take(10):
    print(labels.numpy())


def class_func(features, label):
    return label


resample_ds = (
    creditcard_ds
    .unbatch()
    .rejection_resample(class_func, target_dist=[0.5,0.5],
                        initial_dist=fractions)
    .batch(10))
balanced_ds = resample_ds.map(lambda extra_label, features_and_label: features_and_label)
for features, labels in balanced_ds.take(10):
    print(labels.numpy())

# -- Iterator Checkpointing --------------------------------------------------------------------
range_ds = tf.data.Dataset.range(20)

iterator = iter(range_ds)
ckpt = tf.train.Checkpoint(step=tf.Variable(0), iterator=iterator)
manager = tf.train.CheckpointManager(ckpt, 'my_ckpt', max_to_keep=3)

print([next(iterator).numpy() for _ in range(5)])

save_path = manager.save()

print([next(iterator).numpy() for _ in range(5)])

ckpt.restore(manager.latest_checkpoint)

print([next(iterator).numpy() for _ in range(5)])

# -- Using tf.data with tf.keras ---------------------------------------------------------------
train, test = fashion_mnist_load_data()

images, labels = train
images = images/255.0
labels = labels.astype(np.int32)
fmnist_train_ds = tf.data.Dataset.from_tensor_slices((images, labels))
fmnist_train_ds = fmnist_train_ds.shuffle(5000).batch(32)

model = tf.keras.Sequential([
  tf.keras.layers.Flatten(),
  tf.keras.layers.Dense(10)
])

model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])
# verbose=2: one line an epoch (the progress bar's redraws depend on timing)
history = model.fit(fmnist_train_ds, epochs=2, verbose=2)
print({k: np.round(v, 4) for k, v in history.history.items()})
history = model.fit(fmnist_train_ds.repeat(), epochs=2, steps_per_epoch=20, verbose=2)
print({k: np.round(v, 4) for k, v in history.history.items()})
loss, accuracy = model.evaluate(fmnist_train_ds, verbose=0)
print("Loss :", loss)
print("Accuracy :", accuracy)
loss, accuracy = model.evaluate(fmnist_train_ds.repeat(), steps=10, verbose=0)
print("Loss :", loss)
print("Accuracy :", accuracy)
predict_ds = tf.data.Dataset.from_tensor_slices(images).batch(32)
result = model.predict(predict_ds, steps = 10, verbose=0)
print(result.shape)
result = model.predict(fmnist_train_ds, steps = 10, verbose=0)
print(result.shape)
print("data guide done")

# TF tutorial "Load CSV data" (tutorials/load_data/csv): abalone regression with and without a
# Normalization layer, the titanic preprocessing model over a dict of keras.Inputs
# (Concatenate + Normalization.adapt, StringLookup + CategoryEncoding), its .keras save and
# reload, from_tensor_slices over a dict, tf.data.experimental.make_csv_dataset (labels,
# GZIP, select_columns, file patterns), cache/snapshot, tf.io.decode_csv, CsvDataset,
# TextLineDataset + decode_csv, list_files + interleave.
# No internet: seeded stand-in CSV files with the tutorial's headers and column types replace
# the downloads (abalone, titanic, Metro traffic .csv.gz, 3 small font files). pandas is not
# installed in ndflow's environment: the cells that use it (read_csv, .pop, .items(), the
# final DataFrame) use NumPy/csv equivalents with the same values. plot_model, %%time and the
# image plots print shapes instead; fewer epochs; shuffled batches (make_csv_dataset shuffles
# with an unseeded buffer) print keys, dtypes and shapes instead of values.
# Its stdout equals TF 2.21's but for timings and one loss's last digit (TF's stderr also has
# the deprecation warning make_csv_dataset's ignore_errors logs).
import csv
import gzip
import itertools
import os
import pathlib
import re

import numpy as np

# Make numpy values easier to read.
np.set_printoptions(precision=3, suppress=True)

import ndflow as tf  # noqa: E402
from ndflow.keras import layers  # noqa: E402

tf.keras.utils.set_random_seed(7)

# ---- stand-in data files
rng = np.random.RandomState(0)
n = 120
length = rng.uniform(0.1, 0.8, n)
ab = np.stack([length, length * 0.8, length * 0.25, length ** 3 * 3, length ** 3 * 1.3,
               length ** 3 * 0.7, length ** 3 * 0.9, np.round(4 + 20 * length + rng.randn(n))],
              axis=1)
with open('abalone_train.csv', 'w') as f:
  for row in ab:
    f.write(','.join('%.4g' % v for v in row) + '\n')

towns = ['Southampton', 'Cherbourg', 'Queenstown', 'unknown']
decks = ['unknown', 'C', 'B', 'E', 'A', 'D']
classes = ['Third', 'First', 'Second']
with open('train.csv', 'w') as f:
  f.write('survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,alone\n')
  for i in range(80):
    sex = ['male', 'female'][rng.randint(2)]
    sib, parch = rng.randint(3), rng.randint(3)
    f.write(f"{int(sex == 'female' or rng.rand() < 0.2)},{sex},{rng.randint(1, 70)}.0,{sib},"
            f"{parch},{rng.uniform(5, 80):.4f},{classes[rng.randint(3)]},"
            f"{decks[rng.randint(6)]},{towns[rng.randint(4)]},"
            f"{'y' if sib + parch == 0 else 'n'}\n")
titanic_file_path = os.path.abspath('train.csv')

os.makedirs('traffic', exist_ok=True)
traffic_volume_csv_gz = os.path.abspath('traffic/Metro_Interstate_Traffic_Volume.csv.gz')
with gzip.open(traffic_volume_csv_gz, 'wt') as f:
  f.write('holiday,temp,rain_1h,snow_1h,clouds_all,weather_main,weather_description,'
          'date_time,traffic_volume\n')
  for i in range(600):
    f.write(f"None,{rng.uniform(250, 300):.2f},0.0,0.0,{rng.randint(100)},Clouds,"
            f"scattered clouds,2012-10-{2 + i // 24:02d} {i % 24:02d}:00:00,"
            f"{rng.randint(100, 7000)}\n")

os.makedirs('fonts', exist_ok=True)
font_header = (['font', 'fontVariant', 'm_label', 'strength', 'italic', 'orientation',
                'm_top', 'm_left', 'originalH', 'originalW', 'h', 'w'] +
               [f'r{r}c{c}' for r in range(20) for c in range(20)])
for font in ['AGENCY', 'ARIAL', 'BAITI']:
  with open(f'fonts/{font}.csv', 'w') as f:
    f.write(','.join(font_header) + '\n')
    for k in range(12):
      f.write(','.join([font, font + ' FB', str(64 + k), '0.4', '0', '0.0', str(rng.randint(30)),
                        str(rng.randint(30)), '20', '20', '20', '20'] +
                       [str(v) for v in rng.randint(0, 256, 400)]) + '\n')

# ---- In memory data
# (pd.read_csv(..., names=[...]))
abalone_columns = ["Length", "Diameter", "Height", "Whole weight", "Shucked weight",
                   "Viscera weight", "Shell weight", "Age"]
abalone_train = np.loadtxt('abalone_train.csv', delimiter=',')
print(abalone_columns)
print(abalone_train[:5])

abalone_features = abalone_train[:, :-1].copy()
abalone_labels = abalone_train[:, -1].copy()

abalone_features = np.array(abalone_features)
print(abalone_features)

abalone_model = tf.keras.Sequential([
  layers.Dense(64, activation='relu'),
  layers.Dense(1)
])

abalone_model.compile(loss = tf.keras.losses.MeanSquaredError(),
                      optimizer = tf.keras.optimizers.Adam())

abalone_model.fit(abalone_features, abalone_labels, epochs=3, verbose=2)

normalize = layers.Normalization()

normalize.adapt(abalone_features)
print('mean', normalize.mean.numpy())

norm_abalone_model = tf.keras.Sequential([
  normalize,
  layers.Dense(64, activation='relu'),
  layers.Dense(1)
])

norm_abalone_model.compile(loss = tf.keras.losses.MeanSquaredError(),
                           optimizer = tf.keras.optimizers.Adam())

norm_abalone_model.fit(abalone_features, abalone_labels, epochs=3, verbose=2)

# ---- Mixed data types
# (pd.read_csv: numeric columns become int64/float64 arrays, text ones object arrays)
with open(titanic_file_path) as f:
  rows = list(csv.DictReader(f))
titanic = {}
for name in rows[0]:
  values = [r[name] for r in rows]
  for kind in (int, float, object):
    try:
      titanic[name] = np.array([v if kind is object else kind(v) for v in values], dtype=kind)
      break
    except ValueError:
      pass
print({name: column[:3] for name, column in titanic.items()})

titanic_features = dict(titanic)
titanic_labels = titanic_features.pop('survived')

# Create a symbolic input
input = tf.keras.Input(shape=(), dtype=tf.float32)

# Perform a calculation using the input
result = 2*input + 1

# the result doesn't have a value
print(result)

calc = tf.keras.Model(inputs=input, outputs=result)

print(calc(np.array([1])).numpy())
print(calc(np.array([2])).numpy())

inputs = {}

for name, column in titanic_features.items():
  dtype = column.dtype
  if dtype == object:
    dtype = tf.string
  else:
    dtype = tf.float32

  inputs[name] = tf.keras.Input(shape=(1,), name=name, dtype=dtype)

print(inputs)

numeric_inputs = {name:input for name,input in inputs.items()
                  if input.dtype==tf.float32}

x = layers.Concatenate()(list(numeric_inputs.values()))
norm = layers.Normalization()
# (np.array(titanic[numeric_inputs.keys()]))
norm.adapt(np.stack([titanic[k] for k in numeric_inputs.keys()], axis=1))
all_numeric_inputs = norm(x)

print(all_numeric_inputs)

preprocessed_inputs = [all_numeric_inputs]

for name, input in inputs.items():
  if input.dtype == tf.float32:
    continue

  lookup = layers.StringLookup(vocabulary=np.unique(titanic_features[name]))
  one_hot = layers.CategoryEncoding(num_tokens=lookup.vocabulary_size())

  x = lookup(input)
  x = one_hot(x)
  preprocessed_inputs.append(x)

preprocessed_inputs_cat = layers.Concatenate()(preprocessed_inputs)

titanic_preprocessing = tf.keras.Model(inputs, preprocessed_inputs_cat)

# (plot_model)
print([layer.__class__.__name__ for layer in titanic_preprocessing.layers][-6:])

titanic_features_dict = {name: np.array(value)
                         for name, value in titanic_features.items()}

features_dict = {name:values[:1] for name, values in titanic_features_dict.items()}
print(titanic_preprocessing(features_dict))


def titanic_model(preprocessing_head, inputs):
  body = tf.keras.Sequential([
    layers.Dense(64, activation='relu'),
    layers.Dense(1)
  ])

  preprocessed_inputs = preprocessing_head(inputs)
  result = body(preprocessed_inputs)
  model = tf.keras.Model(inputs, result)

  model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.Adam())
  return model


titanic_model = titanic_model(titanic_preprocessing, inputs)

titanic_model.fit(x=titanic_features_dict, y=titanic_labels, epochs=3, verbose=2)

titanic_model.save('test.keras')
reloaded = tf.keras.models.load_model('test.keras')

features_dict = {name:values[:1] for name, values in titanic_features_dict.items()}

before = titanic_model(features_dict)
after = reloaded(features_dict)
assert (before-after)<1e-3
print(before)
print(after)

# ---- Using tf.data


def slices(features):
  for i in itertools.count():
    # For each feature take index `i`
    example = {name:values[i] for name, values in features.items()}
    yield example


for example in slices(titanic_features_dict):
  for name, value in example.items():
    print(f"{name:19s}: {value}")
  break

features_ds = tf.data.Dataset.from_tensor_slices(titanic_features_dict)

for example in features_ds:
  for name, value in example.items():
    print(f"{name:19s}: {value}")
  break

titanic_ds = tf.data.Dataset.from_tensor_slices((titanic_features_dict, titanic_labels))

titanic_batches = titanic_ds.shuffle(len(titanic_labels)).batch(32)

history = titanic_model.fit(titanic_batches, epochs=2, verbose=0)
print(sorted(history.history), len(history.history['loss']))

# ---- From a single file
titanic_csv_ds = tf.data.experimental.make_csv_dataset(
    titanic_file_path,
    batch_size=5, # Artificially small to make examples easier to show.
    label_name='survived',
    num_epochs=1,
    ignore_errors=True,)

for batch, label in titanic_csv_ds.take(1):
  for key, value in batch.items():
    print(f"{key:20s}: {value.dtype.name} {value.shape}")
  print()
  print(f"{'label':20s}: {label.dtype.name} {label.shape}")

traffic_volume_csv_gz_ds = tf.data.experimental.make_csv_dataset(
    traffic_volume_csv_gz,
    batch_size=256,
    label_name='traffic_volume',
    num_epochs=1,
    compression_type="GZIP")

for batch, label in traffic_volume_csv_gz_ds.take(1):
  for key, value in batch.items():
    print(f"{key:20s}: {value.dtype.name} {value[:5].shape}")
  print()
  print(f"{'label':20s}: {label.dtype.name} {label[:5].shape}")

# ---- Caching
for i, (batch, label) in enumerate(traffic_volume_csv_gz_ds.repeat(20)):
  if i % 40 == 0:
    print('.', end='')
print()

caching = traffic_volume_csv_gz_ds.cache().shuffle(1000)

for i, (batch, label) in enumerate(caching.shuffle(1000).repeat(20)):
  if i % 40 == 0:
    print('.', end='')
print()

snapshotting = traffic_volume_csv_gz_ds.snapshot('titanic.tfsnap').shuffle(1000)

for i, (batch, label) in enumerate(snapshotting.shuffle(1000).repeat(20)):
  if i % 40 == 0:
    print('.', end='')
print()

# ---- Multiple files
font_csvs =  sorted(str(p) for p in pathlib.Path('fonts').glob("*.csv"))

print(font_csvs[:10])
print(len(font_csvs))

fonts_ds = tf.data.experimental.make_csv_dataset(
    file_pattern = "fonts/*.csv",
    batch_size=10, num_epochs=1,
    num_parallel_reads=20,
    shuffle_buffer_size=10000)

for features in fonts_ds.take(1):
  for i, (name, value) in enumerate(features.items()):
    if i>15:
      break
    print(f"{name:20s}: {value.dtype.name} {value.shape}")
print('...')
print(f"[total: {len(features)} features]")


def make_images(features):
  image = [None]*400
  new_feats = {}

  for name, value in features.items():
    match = re.match(r'r(\d+)c(\d+)', name)
    if match:
      image[int(match.group(1))*20+int(match.group(2))] = value
    else:
      new_feats[name] = value

  image = tf.stack(image, axis=0)
  image = tf.reshape(image, [20, 20, -1])
  new_feats['image'] = image

  return new_feats


fonts_image_ds = fonts_ds.map(make_images)

for features in fonts_image_ds.take(1):
  break

# (imshow of 9 images)
print(features['image'].shape, features['m_label'].dtype)

# ---- Lower level functions
text = pathlib.Path(titanic_file_path).read_text()
lines = text.split('\n')[1:-1]

all_strings = [str()]*10
print(all_strings)

features = tf.io.decode_csv(lines, record_defaults=all_strings)

for f in features:
  print(f"type: {f.dtype.name}, shape: {f.shape}")

print(lines[0])

titanic_types = [int(), str(), float(), int(), int(), float(), str(), str(), str(), str()]
print(titanic_types)

features = tf.io.decode_csv(lines, record_defaults=titanic_types)

for f in features:
  print(f"type: {f.dtype.name}, shape: {f.shape}")

simple_titanic = tf.data.experimental.CsvDataset(titanic_file_path, record_defaults=titanic_types, header=True)

for example in simple_titanic.take(1):
  print([e.numpy() for e in example])


def decode_titanic_line(line):
  return tf.io.decode_csv(line, titanic_types)


manual_titanic = (
    # Load the lines of text
    tf.data.TextLineDataset(titanic_file_path)
    # Skip the header row.
    .skip(1)
    # Decode the line.
    .map(decode_titanic_line)
)

for example in manual_titanic.take(1):
  print([e.numpy() for e in example])

font_line = pathlib.Path(font_csvs[0]).read_text().splitlines()[1]
print(font_line[:60])

num_font_features = font_line.count(',')+1
font_column_types = [str(), str()] + [float()]*(num_font_features-2)

print(font_csvs[0])

simple_font_ds = tf.data.experimental.CsvDataset(
    font_csvs,
    record_defaults=font_column_types,
    header=True)

for row in simple_font_ds.take(10):
  print(row[0].numpy())

font_files = tf.data.Dataset.list_files("fonts/*.csv")

# (list_files shuffles each epoch: the sorted names are printed)
print('Epoch 1:')
for f in sorted(list(font_files)[:5], key=lambda t: t.numpy()):
  print("    ", f.numpy())
print('    ...')
print()

print('Epoch 2:')
for f in sorted(list(font_files)[:5], key=lambda t: t.numpy()):
  print("    ", f.numpy())
print('    ...')


def make_font_csv_ds(path):
  return tf.data.experimental.CsvDataset(
    path,
    record_defaults=font_column_types,
    header=True)


font_rows = font_files.interleave(make_font_csv_ds,
                                  cycle_length=3)

fonts_dict = {'font_name':[], 'character':[]}

for row in font_rows.take(10):
  fonts_dict['font_name'].append(row[0].numpy().decode())
  fonts_dict['character'].append(chr(int(row[2].numpy())))

# (pd.DataFrame(fonts_dict)) interleave takes one row of each file in turn (the files come
# in list_files' shuffled order, so the sorted sets are printed)
print(sorted(set(fonts_dict['font_name'])), sorted(set(fonts_dict['character'])))

BATCH_SIZE=2048
fonts_ds = tf.data.experimental.make_csv_dataset(
    file_pattern = "fonts/*.csv",
    batch_size=BATCH_SIZE, num_epochs=1,
    num_parallel_reads=100)

for i,batch in enumerate(fonts_ds.take(20)):
  print('.',end='')

print()

fonts_files = tf.data.Dataset.list_files("fonts/*.csv")
fonts_lines = fonts_files.interleave(
    lambda fname:tf.data.TextLineDataset(fname).skip(1),
    cycle_length=100).batch(BATCH_SIZE)

fonts_fast = fonts_lines.map(lambda x: tf.io.decode_csv(x, record_defaults=font_column_types))

for i,batch in enumerate(fonts_fast.take(20)):
  print('.',end='')

print()
print([b.shape for b in batch][:3], len(batch))

# select_columns (the tutorial's make_csv_dataset argument for a subset of the columns)
subset = tf.data.experimental.make_csv_dataset(
    titanic_file_path, batch_size=4, label_name='survived', num_epochs=1,
    select_columns=['survived', 'age', 'class'], shuffle=False)
for batch, label in subset.take(1):
  print({k: v.numpy() for k, v in batch.items()}, label.numpy())
print('load csv done')

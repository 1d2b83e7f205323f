# TF tutorial "Simple audio recognition: Recognizing keywords" (tutorials/audio/simple_audio):
# audio_dataset_from_directory, tf.signal.stft spectrograms, Resizing + Normalization.adapt,
# a small CNN fit with EarlyStopping, evaluate/predict, confusion matrix, and the ExportModel
# (tf.Module + tf.function with a string and a waveform signature) saved and reloaded.
# No internet: a seeded stand-in for mini_speech_commands (8 words x 12 one-second 16 kHz WAV
# files of class-specific tones, written with Python's wave module) replaces the download;
# plots and audio playback print shapes instead; 3 epochs instead of 10 and batches of 16
# instead of 64 (so the validation split still shards into a validation and a test batch);
# bare notebook expressions are printed. Some files are shorter than 16000 samples (some are
# padded by output_sequence_length, as in the real data set). Its output equals TF 2.21's but
# for timings and the last digits the STFT's float rounding moves.
import os
import pathlib
import wave

import numpy as np

import ndflow as tf
from ndflow.keras import layers, models

# Set the seed value for experiment reproducibility.
seed = 42
tf.random.set_seed(seed)
np.random.seed(seed)
tf.keras.utils.set_random_seed(seed)

DATASET_PATH = 'data/mini_speech_commands'

data_dir = pathlib.Path(DATASET_PATH)
if not data_dir.exists():
  # Stand-in for the download: word i is a tone of 300*(i+1) Hz plus noise, of varying length
  # (some shorter than 16000 samples, so output_sequence_length pads them).
  rng = np.random.RandomState(0)
  words = ['down', 'go', 'left', 'no', 'right', 'stop', 'up', 'yes']
  for i, word in enumerate(words):
    os.makedirs(data_dir / word)
    for j in range(12):
      n = 16000 if j % 3 else 12000 + 1000 * j
      t = np.arange(n) / 16000.0
      sig = 0.5 * np.sin(2 * np.pi * 300 * (i + 1) * t) + 0.1 * rng.randn(n)
      pcm = (np.clip(sig, -1, 1) * 32767).astype('<i2')
      name = '01bb6a2a_nohash_0.wav' if j == 0 else f'{j:08x}_nohash_{j % 2}.wav'
      with wave.open(str(data_dir / word / name), 'wb') as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm.tobytes())
  with open(data_dir / 'README.md', 'w') as f:
    f.write('stand-in\n')

commands = np.array(tf.io.gfile.listdir(str(data_dir)))
commands = commands[(commands != 'README.md') & (commands != '.DS_Store')]
# gfile.listdir's order follows the file system; sort so the line is deterministic
print('Commands:', np.sort(commands))

train_ds, val_ds = tf.keras.utils.audio_dataset_from_directory(
    directory=data_dir,
    batch_size=16,
    validation_split=0.2,
    seed=0,
    output_sequence_length=16000,
    subset='both')

label_names = np.array(train_ds.class_names)
print()
print("label names:", label_names)

print(train_ds.element_spec)


def squeeze(audio, labels):
  audio = tf.squeeze(audio, axis=-1)
  return audio, labels


train_ds = train_ds.map(squeeze, tf.data.AUTOTUNE)
val_ds = val_ds.map(squeeze, tf.data.AUTOTUNE)

test_ds = val_ds.shard(num_shards=2, index=0)
val_ds = val_ds.shard(num_shards=2, index=1)

for example_audio, example_labels in train_ds.take(1):
  print(example_audio.shape)
  print(example_labels.shape)

print(label_names[[1, 1, 3, 0]])

# (plot of the first 9 waveforms)
for i in range(9):
  print(label_names[example_labels[i]], example_audio[i].shape)


def get_spectrogram(waveform):
  # Convert the waveform to a spectrogram via a STFT.
  spectrogram = tf.signal.stft(
      waveform, frame_length=255, frame_step=128)
  # Obtain the magnitude of the STFT.
  spectrogram = tf.abs(spectrogram)
  # Add a `channels` dimension, so that the spectrogram can be used
  # as image-like input data with convolution layers (which expect
  # shape (`batch_size`, `height`, `width`, `channels`).
  spectrogram = spectrogram[..., tf.newaxis]
  return spectrogram


for i in range(3):
  label = label_names[example_labels[i]]
  waveform = example_audio[i]
  spectrogram = get_spectrogram(waveform)

  print('Label:', label)
  print('Waveform shape:', waveform.shape)
  print('Spectrogram shape:', spectrogram.shape)
  print('Audio playback')


def plot_spectrogram(spectrogram):
  if len(spectrogram.shape) > 2:
    assert len(spectrogram.shape) == 3
    spectrogram = np.squeeze(spectrogram, axis=-1)
  # Convert the frequencies to log scale and transpose, so that the time is
  # represented on the x-axis (columns).
  # Add an epsilon to avoid taking a log of zero.
  log_spec = np.log(spectrogram.T + np.finfo(float).eps)
  height = log_spec.shape[0]
  width = log_spec.shape[1]
  X = np.linspace(0, np.size(spectrogram), num=width, dtype=int)
  Y = range(height)
  # (pcolormesh) the peak frequency bin of the spectrogram
  print('log_spec', log_spec.shape, X[-1], len(Y), int(np.argmax(log_spec.mean(axis=1))))


timescale = np.arange(waveform.shape[0])
print('Waveform', timescale.shape, waveform.numpy().shape)
plot_spectrogram(spectrogram.numpy())
print(label.title())


def make_spec_ds(ds):
  return ds.map(
      map_func=lambda audio, label: (get_spectrogram(audio), label),
      num_parallel_calls=tf.data.AUTOTUNE)


train_spectrogram_ds = make_spec_ds(train_ds)
val_spectrogram_ds = make_spec_ds(val_ds)
test_spectrogram_ds = make_spec_ds(test_ds)

for example_spectrograms, example_spect_labels in train_spectrogram_ds.take(1):
  break

for i in range(9):
  plot_spectrogram(example_spectrograms[i].numpy())
  print(label_names[example_spect_labels[i].numpy()])

train_spectrogram_ds = train_spectrogram_ds.cache().shuffle(10000).prefetch(tf.data.AUTOTUNE)
val_spectrogram_ds = val_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE)
test_spectrogram_ds = test_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE)

input_shape = example_spectrograms.shape[1:]
print('Input shape:', input_shape)
num_labels = len(label_names)

# Instantiate the `tf.keras.layers.Normalization` layer.
norm_layer = layers.Normalization()
# Fit the state of the layer to the spectrograms
# with `Normalization.adapt`.
norm_layer.adapt(data=train_spectrogram_ds.map(map_func=lambda spec, label: spec))
print('norm mean', norm_layer.mean.shape, float(np.mean(norm_layer.mean)))

model = models.Sequential([
    layers.Input(shape=input_shape),
    # Downsample the input.
    layers.Resizing(32, 32),
    # Normalize.
    norm_layer,
    layers.Conv2D(32, 3, activation='relu'),
    layers.Conv2D(64, 3, activation='relu'),
    layers.MaxPooling2D(),
    layers.Dropout(0.25),
    layers.Flatten(),
    layers.Dense(128, activation='relu'),
    layers.Dropout(0.5),
    layers.Dense(num_labels),
])

model.summary()

model.compile(
    optimizer=tf.keras.optimizers.Adam(),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=['accuracy'],
)

EPOCHS = 3
history = model.fit(
    train_spectrogram_ds,
    validation_data=val_spectrogram_ds,
    epochs=EPOCHS,
    callbacks=tf.keras.callbacks.EarlyStopping(verbose=1, patience=2),
    verbose=2,
)

metrics = history.history
print(history.epoch, sorted(metrics))
print(len(metrics['loss']), len(metrics['val_accuracy']))

results = model.evaluate(test_spectrogram_ds, return_dict=True, verbose=0)
print({k: round(v, 3) for k, v in sorted(results.items())})

y_pred = model.predict(test_spectrogram_ds, verbose=0)
print('y_pred', y_pred.shape, y_pred.dtype)

y_pred = tf.argmax(y_pred, axis=1)

y_true = tf.concat(list(test_spectrogram_ds.map(lambda s, lab: lab)), axis=0)
print('y_true', y_true.shape, y_true.dtype, y_pred.dtype)

confusion_mtx = tf.math.confusion_matrix(y_true, y_pred)
print(confusion_mtx)

x = data_dir/'no/01bb6a2a_nohash_0.wav'
x = tf.io.read_file(str(x))
x, sample_rate = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000,)
print('decoded', x.shape, x.dtype, sample_rate)
x = tf.squeeze(x, axis=-1)
waveform = x
x = get_spectrogram(x)
x = x[tf.newaxis, ...]

prediction = model(x)
x_labels = ['no', 'yes', 'down', 'go', 'left', 'up', 'right', 'stop']
probs = tf.nn.softmax(prediction[0])
print('No', probs.shape, round(float(tf.reduce_sum(probs)), 4), x_labels, np.round(probs, 2))


class ExportModel(tf.Module):
  def __init__(self, model):
    self.model = model

    # Accept either a string-filename or a batch of waveforms.
    # You could add additional signatures for a single wave, or a ragged-batch.
    self.__call__.get_concrete_function(
        x=tf.TensorSpec(shape=(), dtype=tf.string))
    self.__call__.get_concrete_function(
       x=tf.TensorSpec(shape=[None, 16000], dtype=tf.float32))

  @tf.function
  def __call__(self, x):
    # If they pass a string, load the file and decode it.
    if x.dtype == tf.string:
      x = tf.io.read_file(x)
      x, _ = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000,)
      x = tf.squeeze(x, axis=-1)
      x = x[tf.newaxis, :]

    x = get_spectrogram(x)
    result = self.model(x, training=False)

    class_ids = tf.argmax(result, axis=-1)
    class_names = tf.gather(label_names, class_ids)
    return {'predictions': result,
            'class_ids': class_ids,
            'class_names': class_names}


def show(out):
  # (the notebook displays the dict) keys, shapes, dtypes and the predicted class
  for k in sorted(out):
    print(k, out[k].shape, out[k].dtype)
  print(out['class_ids'], out['class_names'])
  return out


export = ExportModel(model)
a = show(export(tf.constant(str(data_dir/'no/01bb6a2a_nohash_0.wav'))))

tf.saved_model.save(export, "saved")
imported = tf.saved_model.load("saved")
b = show(imported(waveform[tf.newaxis, :]))
print('same prediction', np.allclose(a['predictions'].numpy(), b['predictions'].numpy(), atol=1e-5),
      a['class_names'].numpy() == b['class_names'].numpy())
print('simple audio done')

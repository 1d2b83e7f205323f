# TF tutorials "Load NumPy data" (site/en/tutorials/load_data/numpy.ipynb), "Load text"
# (site/en/tutorials/load_data/text.ipynb) and "Adversarial example using FGSM"
# (site/en/tutorials/generative/adversarial_fgsm.ipynb), run as written; the notebooks'
# displayed cell results are printed. Adaptations:
# - no downloads: seeded local stand-ins of the same format, written by the script: an
#   `mnist.npz` of 640 + 128 random 28x28 uint8 images; a small "Stack Overflow" folder
#   (train/ and test/, one folder of .txt questions per language); three small "Iliad" text
#   files (cowper.txt, derby.txt, butler.txt); a random 96x128 JPEG for the Labrador.
# - seeded (tf.keras.utils.set_random_seed), fewer epochs (numpy: 3 for 10; Stack Overflow: 3
#   for 10), smaller sizes (Iliad: BUFFER_SIZE 5000, VALIDATION_SIZE 50); training
#   is run with verbose=0 or 2 (no progress bar) and the history printed rounded.
# - no plots (matplotlib is not installed), no `tf.keras.utils.plot_model` (needs pydot).
# - load text: the vocabulary indices the guide looks up (1289, 313) are beyond the stand-in's
#   small vocabulary: 12 and 31 are looked up instead. The Iliad part's tokenizer uses
#   tensorflow_text (not installed, not part of TF): `tf_text.case_fold_utf8` ->
#   `tf.strings.lower`, `UnicodeScriptTokenizer().tokenize` -> `tf.strings.split` (both split
#   words at whitespace; the stand-in's text has no punctuation). The IMDB part (tfds) is left
#   out.
# - `model.predict` on a Python list of strings (twice) -> on `tf.constant(...)` of it: TF 2.21
#   rejects a list ("ValueError: Unrecognized data type: x=['How do you sort a list?'] (of
#   type <class 'list'>)").
# - Iliad: `preprocess_text = tf.keras.Sequential([tokenizer, vocab_table])` fails under
#   TF 2.21 (Keras 3 builds the Sequential for a float32 input: "Input 'input' of 'StringLower'
#   Op has type float32 that does not match expected type of string"), and a Sequential built
#   for one string (the guide's first call) would not take batches later: a Layer with
#   dtype="string" calling the two stands in for it. `loaded(...)` (the model reloaded with
#   tf.saved_model.load) -> `loaded.signatures['serving_default'](...)`: TF 2.21 cannot call
#   it ("TypeError: '_UserObject' object is not callable").
# - FGSM: MobileNetV2 with `weights=None` (no ImageNet weights to download), so
#   `decode_predictions` (which downloads ImageNet's class index) is replaced by the top class
#   index and its confidence; probabilities are printed rounded. The untrained network's
#   probabilities are uniform (0.001 each) and the loss's input gradient ~1e-14, so the signs
#   of the perturbation depend on rounding (printed: its shape and dtype only).
# - Load NumPy data trains on the guide's unscaled pixels: only the first epoch's loss is
#   printed, later ones as checks (see there).
# The output equals TF 2.21's but for timings and the captures `model.export` prints (object
# ids; TF's serving function also captures two constants of the lookup layer).
import collections
import os
import pathlib

import numpy as np
import ndflow as tf

from ndflow.keras import layers
from ndflow.keras import losses
from ndflow.keras import utils
from ndflow.keras.layers import TextVectorization

tf.keras.utils.set_random_seed(0)

# ---------------------------------------------------------------- Load NumPy data
rng = np.random.RandomState(0)
np.savez("mnist.npz", x_train=rng.randint(0, 256, (640, 28, 28)).astype("uint8"),
         y_train=rng.randint(0, 10, 640).astype("uint8"),
         x_test=rng.randint(0, 256, (128, 28, 28)).astype("uint8"),
         y_test=rng.randint(0, 10, 128).astype("uint8"))
path = "mnist.npz"   # the guide: tf.keras.utils.get_file('mnist.npz', DATA_URL)
with np.load(path) as data:
  train_examples = data['x_train']
  train_labels = data['y_train']
  test_examples = data['x_test']
  test_labels = data['y_test']

train_dataset = tf.data.Dataset.from_tensor_slices((train_examples, train_labels))
test_dataset = tf.data.Dataset.from_tensor_slices((test_examples, test_labels))
print(train_dataset.element_spec)

BATCH_SIZE = 64
SHUFFLE_BUFFER_SIZE = 100

train_dataset = train_dataset.shuffle(SHUFFLE_BUFFER_SIZE).batch(BATCH_SIZE)
test_dataset = test_dataset.batch(BATCH_SIZE)

model = tf.keras.Sequential([
    tf.keras.layers.Flatten(input_shape=(28, 28)),
    tf.keras.layers.Dense(128, activation='relu'),
    tf.keras.layers.Dense(10)
])

model.compile(optimizer=tf.keras.optimizers.RMSprop(),
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['sparse_categorical_accuracy'])
# the guide's data is not scaled (pixels up to 255): the logits are in the hundreds, and the
# last float32 digits of the first steps (summation order) grow into different losses after
# the first epoch, in TF from one kernel to another as well: checks from epoch 2 on
history = model.fit(train_dataset, epochs=3, verbose=0)
loss, acc = history.history['loss'], history.history['sparse_categorical_accuracy']
print("epoch 1 loss %.2f accuracy %.4f" % (loss[0], acc[0]))
print("loss decreases:", loss[0] > loss[1] > loss[2])
result = model.evaluate(test_dataset, verbose=0)
print("evaluate:", len(result), all(np.isfinite(result)))

# ---------------------------------------------------------------- Load text: Stack Overflow
LANGS = ["csharp", "java", "javascript", "python"]
COMMON = ("how do i get the value of a list in my code when it is not working with this "
          "function error string array object file").split()
OWN = {"csharp": "linq dotnet console writeline visual studio".split(),
       "java": "jvm arraylist hashmap spring maven".split(),
       "javascript": "node dom jquery promise browser".split(),
       "python": "pandas numpy django pip lambda".split()}
rng = np.random.RandomState(1)
for split, count in (("train", 40), ("test", 10)):
  for lang in LANGS:
    os.makedirs(os.path.join("stack_overflow", split, lang), exist_ok=True)
    for i in range(count):
      words = list(rng.choice(COMMON, 12)) + list(rng.choice(OWN[lang], 3))
      rng.shuffle(words)
      with open(os.path.join("stack_overflow", split, lang, "%d.txt" % (1000 + i)), "w") as f:
        f.write('"' + " ".join(words) + '"\n')

dataset_dir = pathlib.Path("stack_overflow")
print(sorted(p.name for p in dataset_dir.iterdir()))

train_dir = dataset_dir/'train'
print(sorted(p.name for p in train_dir.iterdir()))

sample_file = train_dir/'python/1007.txt'

with open(sample_file) as f:
  print(f.read())

batch_size = 32
seed = 42

raw_train_ds = utils.text_dataset_from_directory(
    train_dir,
    batch_size=batch_size,
    validation_split=0.2,
    subset='training',
    seed=seed)

for text_batch, label_batch in raw_train_ds.take(1):
  for i in range(10):
    print("Question: ", text_batch.numpy()[i])
    print("Label:", label_batch.numpy()[i])

for i, label in enumerate(raw_train_ds.class_names):
  print("Label", i, "corresponds to", label)

# Create a validation set.
raw_val_ds = utils.text_dataset_from_directory(
    train_dir,
    batch_size=batch_size,
    validation_split=0.2,
    subset='validation',
    seed=seed)

test_dir = dataset_dir/'test'

# Create a test set.
raw_test_ds = utils.text_dataset_from_directory(
    test_dir,
    batch_size=batch_size)

raw_train_ds = raw_train_ds.cache().prefetch(buffer_size=tf.data.AUTOTUNE)
raw_val_ds = raw_val_ds.cache().prefetch(buffer_size=tf.data.AUTOTUNE)
raw_test_ds = raw_test_ds.prefetch(buffer_size=tf.data.AUTOTUNE)

VOCAB_SIZE = 10000

binary_vectorize_layer = TextVectorization(
    max_tokens=VOCAB_SIZE,
    output_mode='binary')

MAX_SEQUENCE_LENGTH = 250

int_vectorize_layer = TextVectorization(
    max_tokens=VOCAB_SIZE,
    output_mode='int',
    output_sequence_length=MAX_SEQUENCE_LENGTH)

# Make a text-only dataset (without labels), then call `TextVectorization.adapt`.
train_text = raw_train_ds.map(lambda text, labels: text)
binary_vectorize_layer.adapt(train_text)
int_vectorize_layer.adapt(train_text)

# Retrieve a batch (of 32 reviews and labels) from the dataset.
text_batch, label_batch = next(iter(raw_train_ds))
first_question, first_label = text_batch[0], label_batch[0]
print("Question:", first_question)
print("Label:", first_label)

print("'binary' vectorized question:",
      list(binary_vectorize_layer(first_question).numpy()))

print("'int' vectorized question:",
      int_vectorize_layer(first_question).numpy())

print("12 ---> ", int_vectorize_layer.get_vocabulary()[12])
print("31 ---> ", int_vectorize_layer.get_vocabulary()[31])
print("Vocabulary size: {}".format(len(int_vectorize_layer.get_vocabulary())))

binary_model = tf.keras.Sequential([
    binary_vectorize_layer,
    layers.Dense(4)])

binary_model.compile(
    loss=losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer='adam',
    metrics=['accuracy'])

bin_history = binary_model.fit(
    raw_train_ds, validation_data=raw_val_ds, epochs=3, verbose=2)

print()
print({k: [round(v, 3) for v in vals] for k, vals in bin_history.history.items()})


def create_model(vocab_size, num_labels, vectorizer=None):
  my_layers = []
  if vectorizer is not None:
    my_layers = [vectorizer]

  my_layers.extend([
      layers.Embedding(vocab_size, 64, mask_zero=True),
      layers.Dropout(0.5),
      layers.Conv1D(64, 5, padding="valid", activation="relu", strides=2),
      layers.GlobalMaxPooling1D(),
      layers.Dense(num_labels)
  ])

  model = tf.keras.Sequential(my_layers)
  return model


# `vocab_size` is `VOCAB_SIZE + 1` since `0` is used additionally for padding.
int_model = create_model(vocab_size=VOCAB_SIZE + 1, num_labels=4, vectorizer=int_vectorize_layer)

int_model.compile(
    loss=losses.SparseCategoricalCrossentropy(from_logits=True),
    optimizer='adam',
    metrics=['accuracy'])
int_history = int_model.fit(raw_train_ds, validation_data=raw_val_ds, epochs=3, verbose=2)
print({k: [round(v, 3) for v in vals] for k, vals in int_history.history.items()})

binary_train_ds = raw_train_ds.map(lambda x, y: (binary_vectorize_layer(x), y))
binary_val_ds = raw_val_ds.map(lambda x, y: (binary_vectorize_layer(x), y))
binary_test_ds = raw_test_ds.map(lambda x, y: (binary_vectorize_layer(x), y))

int_train_ds = raw_train_ds.map(lambda x, y: (int_vectorize_layer(x), y))
int_val_ds = raw_val_ds.map(lambda x, y: (int_vectorize_layer(x), y))
int_test_ds = raw_test_ds.map(lambda x, y: (int_vectorize_layer(x), y))
print(binary_test_ds.element_spec)
print(int_test_ds.element_spec)

binary_model.export('bin.tf')

loaded = tf.saved_model.load('bin.tf')

# the guide passes a Python list, which TF 2.21 rejects (header)
print(np.round(binary_model.predict(tf.constant(['How do you sort a list?']), verbose=0), 4))

print(np.round(loaded.serve(tf.constant(['How do you sort a list?'])).numpy(), 4))

# ---------------------------------------------------------------- Load text: the Iliad
FILE_NAMES = ['cowper.txt', 'derby.txt', 'butler.txt']
ILIAD = ("the son of atreus king of men and achilles sing goddess the anger of peleus son "
         "that brought countless ills upon the achaeans and many a brave soul hurried down "
         "to hades").split()
rng = np.random.RandomState(2)
os.makedirs("illiad", exist_ok=True)
for i, name in enumerate(FILE_NAMES):
  with open(os.path.join("illiad", name), "w") as f:
    for _ in range(60):
      words = list(rng.choice(ILIAD, rng.randint(4, 10)))
      words[0] = words[0].capitalize()
      f.write(" ".join(words) + "\n")

parent_dir = pathlib.Path("illiad")
print(sorted(p.name for p in parent_dir.iterdir()))


def labeler(example, index):
  return example, tf.cast(index, tf.int64)


labeled_data_sets = []

for i, file_name in enumerate(FILE_NAMES):
  lines_dataset = tf.data.TextLineDataset(str(parent_dir/file_name))
  labeled_dataset = lines_dataset.map(lambda ex: labeler(ex, i))
  labeled_data_sets.append(labeled_dataset)

BUFFER_SIZE = 5000
BATCH_SIZE = 64
VALIDATION_SIZE = 50

all_labeled_data = labeled_data_sets[0]
for labeled_dataset in labeled_data_sets[1:]:
  all_labeled_data = all_labeled_data.concatenate(labeled_dataset)

all_labeled_data = all_labeled_data.shuffle(
    BUFFER_SIZE, reshuffle_each_iteration=False)

for text, label in all_labeled_data.take(10):
  print("Sentence: ", text.numpy())
  print("Label:", label.numpy())


class MyTokenizer(tf.keras.layers.Layer):
  def __init__(self):
    super().__init__()
    self.tokenizer = tf.strings.split   # the guide: tf_text.UnicodeScriptTokenizer()

  def call(self, text):
    lower_case = tf.strings.lower(text)   # the guide: tf_text.case_fold_utf8(text)
    result = self.tokenizer(lower_case)
    # If you pass a batch of strings, it will return a RaggedTensor.
    if isinstance(result, tf.RaggedTensor):
      # Convert to dense 0-padded.
      result = result.to_tensor()
    return result


tokenizer = MyTokenizer()

tokenized_ds = all_labeled_data.map(lambda text, label: (tokenizer(text), label))
print(tokenized_ds.element_spec)

for tokens, label in tokenized_ds.take(1):
  break

print(tokens)
print()
print(label)

tokenized_ds = tokenized_ds.cache().prefetch(tf.data.AUTOTUNE)

vocab_count = collections.Counter()
for toks, labels in tokenized_ds.ragged_batch(1000):
  toks = tf.reshape(toks, [-1])
  for tok in toks.numpy():
    vocab_count[tok] += 1

vocab = [tok for tok, count in vocab_count.most_common(VOCAB_SIZE)]

print("First five vocab entries:", vocab[:5])
print()


class MyVocabTable(tf.keras.layers.Layer):
  def __init__(self, vocab):
    super().__init__()
    self.keys = [''] + vocab
    self.values = range(len(self.keys))

    self.init = tf.lookup.KeyValueTensorInitializer(
        self.keys, self.values, key_dtype=tf.string, value_dtype=tf.int64)

    num_oov_buckets = 1

    self.table = tf.lookup.StaticVocabularyTable(self.init, num_oov_buckets)

  def call(self, x):
    result = self.table.lookup(x)
    return result


vocab_table = MyVocabTable(['a', 'b', 'c'])
print(vocab_table(tf.constant([''] + list('abcdefghi'))))

vocab_table = MyVocabTable(vocab)



class PreprocessText(tf.keras.layers.Layer):   # the guide's Sequential (header)
  def __init__(self):
    super().__init__(dtype="string")
    self.tokenizer = tokenizer
    self.vocab_table = vocab_table

  def call(self, text):
    return self.vocab_table(self.tokenizer(text))


preprocess_text = PreprocessText()

example_text, example_label = next(iter(all_labeled_data))
print("Sentence: ", example_text.numpy())
vectorized_text = preprocess_text(example_text)
print("Vectorized sentence: ", vectorized_text.numpy())

all_encoded_data = all_labeled_data.map(lambda text, labels: (preprocess_text(text), labels))

for ids, label in all_encoded_data.take(1):
  break

print("Ids: ", ids.numpy())
print("Label: ", label.numpy())

train_data = all_encoded_data.skip(VALIDATION_SIZE).shuffle(BUFFER_SIZE).padded_batch(BATCH_SIZE)
validation_data = all_encoded_data.take(VALIDATION_SIZE).padded_batch(BATCH_SIZE)

sample_text, sample_labels = next(iter(validation_data))
print("Text batch shape: ", sample_text.shape)
print("Label batch shape: ", sample_labels.shape)
print("First text example: ", sample_text[0])
print("First label example: ", sample_labels[0])

train_data = train_data.prefetch(tf.data.AUTOTUNE)
validation_data = validation_data.prefetch(tf.data.AUTOTUNE)

model = create_model(vocab_size=VOCAB_SIZE+2, num_labels=3)

model.compile(
    optimizer='adam',
    loss=losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=['accuracy'])

history = model.fit(train_data, validation_data=validation_data, epochs=3, verbose=2)
print({k: [round(v, 3) for v in vals] for k, vals in history.history.items()})

metrics = model.evaluate(validation_data, return_dict=True, verbose=0)

print("Loss: ", round(metrics['loss'], 4))
print("Accuracy: {:2.2%}".format(metrics['accuracy']))

export_model = tf.keras.Sequential([
    preprocess_text,
    model
])

export_model.compile(
    loss=losses.SparseCategoricalCrossentropy(from_logits=False),
    optimizer='adam',
    metrics=['accuracy'])

# Create a test dataset of raw strings.
test_ds = all_labeled_data.take(VALIDATION_SIZE).batch(BATCH_SIZE)
test_ds = test_ds.cache().prefetch(tf.data.AUTOTUNE)
print(test_ds.element_spec)

loss, accuracy = export_model.evaluate(test_ds, verbose=0)

print("Loss: ", round(loss, 4))
print("Accuracy: {:2.2%}".format(accuracy))

tf.saved_model.save(export_model, 'export.tf')

loaded = tf.saved_model.load('export.tf')

sentence = tf.constant(['The field bristled with the long and deadly spears which they bore.'])
print(np.round(export_model(sentence).numpy(), 4))
# the guide calls `loaded(...)`: TF 2.21's loaded Keras model is not callable (header)
print({k: np.round(v.numpy(), 4)
       for k, v in loaded.signatures['serving_default'](sentence).items()})

inputs = [
    "Join'd to th' Ionians with their flowing robes,",  # Label: 1
    "the allies, and his armour flashed about him so that he seemed to all",  # Label: 2
    "And with loud clangor of his arms he fell.",  # Label: 0
]

predicted_scores = export_model.predict(tf.constant(inputs), verbose=0)   # (header)
predicted_labels = tf.math.argmax(predicted_scores, axis=1)

for input, label in zip(inputs, predicted_labels):
  print("Question: ", input)
  print("Predicted label: ", label.numpy())

# ---------------------------------------------------------------- Adversarial example (FGSM)
pretrained_model = tf.keras.applications.MobileNetV2(include_top=True,
                                                     weights=None)
pretrained_model.trainable = False


# Helper function to preprocess the image so that it can be inputted in MobileNetV2
def preprocess(image):
  image = tf.cast(image, tf.float32)
  image = tf.image.resize(image, (224, 224))
  image = tf.keras.applications.mobilenet_v2.preprocess_input(image)
  image = image[None, ...]
  return image


# Helper function to extract labels from probability vector (the guide: decode_predictions)
def get_imagenet_label(probs):
  index = int(np.argmax(probs[0]))
  return "n%08d" % index, "class_%d" % index, float(probs[0][index])


rng = np.random.RandomState(3)
pixels = (rng.uniform(0, 1, (12, 16, 3)).repeat(8, 0).repeat(8, 1) * 255).astype("uint8")
tf.io.write_file("YellowLabradorLooking_new.jpg", tf.io.encode_jpeg(pixels))
image_path = "YellowLabradorLooking_new.jpg"
image_raw = tf.io.read_file(image_path)
image = tf.image.decode_image(image_raw)
print(image.shape, image.dtype, int(tf.reduce_sum(tf.cast(image, tf.int64))))

image = preprocess(image)
image_probs = pretrained_model.predict(image, verbose=0)
print(image_probs.shape, round(float(image_probs.sum()), 4))

_, image_class, class_confidence = get_imagenet_label(image_probs)
print('{} : {:.2f}% Confidence'.format(image_class, class_confidence*100))

loss_object = tf.keras.losses.CategoricalCrossentropy()


def create_adversarial_pattern(input_image, input_label):
  with tf.GradientTape() as tape:
    tape.watch(input_image)
    prediction = pretrained_model(input_image)
    loss = loss_object(input_label, prediction)

  # Get the gradients of the loss w.r.t to the input image.
  gradient = tape.gradient(loss, input_image)
  # Get the sign of the gradients to create the perturbation
  signed_grad = tf.sign(gradient)
  return signed_grad


# Get the input label of the image.
labrador_retriever_index = 208
label = tf.one_hot(labrador_retriever_index, image_probs.shape[-1])
label = tf.reshape(label, (1, image_probs.shape[-1]))

perturbations = create_adversarial_pattern(image, label)
print(perturbations.shape, perturbations.dtype)


def display_images(image, description):
  _, label, confidence = get_imagenet_label(pretrained_model.predict(image, verbose=0))
  print('{} \n {} : {:.2f}% Confidence'.format(description, label, confidence*100))


epsilons = [0, 0.01, 0.1, 0.15]
descriptions = [('Epsilon = {:0.3f}'.format(eps) if eps else 'Input')
                for eps in epsilons]

for i, eps in enumerate(epsilons):
  adv_x = image + eps*perturbations
  adv_x = tf.clip_by_value(adv_x, -1, 1)
  display_images(adv_x, descriptions[i])

print("load numpy text fgsm done")

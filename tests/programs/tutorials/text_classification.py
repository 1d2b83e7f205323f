# TF tutorials "Basic text classification", "Text classification with an RNN", "Word embeddings"
# Adapted: a small generated aclImdb-style folder; predictions on tf.constant strings (TF 2.21's Keras rejects NumPy str arrays: 'Invalid dtype').
import os, re, shutil, string, numpy as np
import ndflow as tf
from ndflow.keras import layers, losses
rng = np.random.default_rng(5)
words = "good great bad awful movie film plot actor boring fun love hate the a is was".split()
base = "aclImdb"
shutil.rmtree(base, ignore_errors=True)
for split in ["train", "test"]:
    for label in ["neg", "pos"]:
        os.makedirs(f"{base}/{split}/{label}")
        for i in range(40):
            text = " ".join(rng.choice(words, 12)) + ("<br />great fun" if label == "pos" else "<br />awful")
            open(f"{base}/{split}/{label}/{i}_1.txt", "w").write(text)
batch_size = 16
seed = 42
raw_train_ds = tf.keras.utils.text_dataset_from_directory(
    f'{base}/train', batch_size=batch_size, validation_split=0.2, subset='training', seed=seed)
for text_batch, label_batch in raw_train_ds.take(1):
  for i in range(3):
    print("Review", text_batch.numpy()[i])
    print("Label", label_batch.numpy()[i])
print("Label 0 corresponds to", raw_train_ds.class_names[0])
raw_val_ds = tf.keras.utils.text_dataset_from_directory(
    f'{base}/train', batch_size=batch_size, validation_split=0.2, subset='validation', seed=seed)
raw_test_ds = tf.keras.utils.text_dataset_from_directory(f'{base}/test', batch_size=batch_size)
def custom_standardization(input_data):
  lowercase = tf.strings.lower(input_data)
  stripped_html = tf.strings.regex_replace(lowercase, '<br />', ' ')
  return tf.strings.regex_replace(stripped_html, '[%s]' % re.escape(string.punctuation), '')
max_features = 100
sequence_length = 20
vectorize_layer = layers.TextVectorization(
    standardize=custom_standardization, max_tokens=max_features,
    output_mode='int', output_sequence_length=sequence_length)
train_text = raw_train_ds.map(lambda x, y: x)
vectorize_layer.adapt(train_text)
def vectorize_text(text, label):
  text = tf.expand_dims(text, -1)
  return vectorize_layer(text), label
text_batch, label_batch = next(iter(raw_train_ds))
first_review, first_label = text_batch[0], label_batch[0]
print("Vectorized review", vectorize_text(first_review, first_label))
print("1287 ---> ",vectorize_layer.get_vocabulary()[7])
print('Vocabulary size: {}'.format(len(vectorize_layer.get_vocabulary())))
train_ds = raw_train_ds.map(vectorize_text)
val_ds = raw_val_ds.map(vectorize_text)
test_ds = raw_test_ds.map(vectorize_text)
AUTOTUNE = tf.data.AUTOTUNE
train_ds = train_ds.cache().prefetch(buffer_size=AUTOTUNE)
val_ds = val_ds.cache().prefetch(buffer_size=AUTOTUNE)
test_ds = test_ds.cache().prefetch(buffer_size=AUTOTUNE)
embedding_dim = 16
model = tf.keras.Sequential([
  layers.Embedding(max_features, embedding_dim),
  layers.Dropout(0.2),
  layers.GlobalAveragePooling1D(),
  layers.Dropout(0.2),
  layers.Dense(1, activation='sigmoid')])
model.summary()
model.compile(loss=losses.BinaryCrossentropy(),
              optimizer='adam',
              metrics=[tf.metrics.BinaryAccuracy(threshold=0.5)])
history = model.fit(train_ds, validation_data=val_ds, epochs=3)
loss, accuracy = model.evaluate(test_ds)
history_dict = history.history
print(history_dict.keys())
export_model = tf.keras.Sequential([
  vectorize_layer,
  model,
  layers.Activation('sigmoid')
])
export_model.compile(
    loss=losses.BinaryCrossentropy(from_logits=False), optimizer="adam", metrics=['accuracy']
)
metrics = export_model.evaluate(raw_test_ds, return_dict=True)
print(metrics)
examples = tf.constant([
  "The movie was great!",
  "The movie was okay.",
  "The movie was terrible..."
])
print(export_model.predict(examples))
# RNN text classification
VOCAB_SIZE = 100
encoder = tf.keras.layers.TextVectorization(max_tokens=VOCAB_SIZE)
encoder.adapt(raw_train_ds.map(lambda text, label: text))
vocab = np.array(encoder.get_vocabulary())
print(vocab[:20])
encoded_example = encoder(text_batch)[:3].numpy()
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Embedding(
        input_dim=len(encoder.get_vocabulary()),
        output_dim=64,
        mask_zero=True),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(64,  return_sequences=True)),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(32)),
    tf.keras.layers.Dense(64, activation='relu'),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(1)
])
print([layer.supports_masking for layer in model.layers])
sample_text = ('The movie was cool. The animation and the graphics '
               'were out of this world. I would recommend this movie.')
predictions = model.predict(tf.constant([sample_text]))
print(predictions[0])
padding = "the " * 2000
predictions = model.predict(tf.constant([sample_text, padding]))
print(predictions[0])
model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.Adam(1e-4),
              metrics=['accuracy'])
history = model.fit(raw_train_ds, epochs=1, validation_data=raw_val_ds, validation_steps=2)
# word embeddings tutorial: get weights, write vectors
weights = model.get_layer(index=1).get_weights()[0]
vocab = encoder.get_vocabulary()
import io
out_v = io.open('vectors.tsv', 'w', encoding='utf-8')
for index, word in enumerate(vocab):
  if index == 0:
    continue
  vec = weights[index]
  out_v.write('\t'.join([str(x) for x in vec]) + "\n")
out_v.close()
tensorboard_callback = tf.keras.callbacks.TensorBoard(log_dir="logs")

# TF tutorials: word2vec, "Classify structured data using Keras preprocessing layers",
# Adapted: dicts of arrays stand in for DataFrames; labels shaped (n, 1) for the BinaryCrossentropy metric, `mse` for `mean_squared_error` and `predictions[0][0]` (as TF 2.21 with NumPy 2 requires).
# "Overfit and underfit", "Customizing what happens in fit", "Custom training: walkthrough", distributed
import numpy as np, io, os
import ndflow as tf
from ndflow.keras import layers
SEED = 42
sentence = "The wide road shimmered in the hot sun"
tokens = list(sentence.lower().split())
vocab, index = {}, 1
vocab['<pad>'] = 0
for token in tokens:
  if token not in vocab:
    vocab[token] = index
    index += 1
vocab_size = len(vocab)
inverse_vocab = {index: token for token, index in vocab.items()}
example_sequence = [vocab[word] for word in tokens]
window_size = 2
positive_skip_grams, _ = tf.keras.preprocessing.sequence.skipgrams(
      example_sequence, vocabulary_size=vocab_size, window_size=window_size, negative_samples=0)
print(len(positive_skip_grams))
target_word, context_word = positive_skip_grams[0]
num_ns = 4
context_class = tf.reshape(tf.constant(context_word, dtype="int64"), (1, 1))
negative_sampling_candidates, _, _ = tf.random.log_uniform_candidate_sampler(
    true_classes=context_class, num_true=1, num_sampled=num_ns, unique=True, range_max=vocab_size, seed=SEED, name="negative_sampling")
print(negative_sampling_candidates)
squeezed_context_class = tf.squeeze(context_class, 1)
context = tf.concat([squeezed_context_class, negative_sampling_candidates], 0)
label = tf.constant([1] + [0]*num_ns, dtype="int64")
target = target_word
sampling_table = tf.keras.preprocessing.sequence.make_sampling_table(size=10)
print(sampling_table)
class Word2Vec(tf.keras.Model):
  def __init__(self, vocab_size, embedding_dim):
    super(Word2Vec, self).__init__()
    self.target_embedding = layers.Embedding(vocab_size, embedding_dim, name="w2v_embedding")
    self.context_embedding = layers.Embedding(vocab_size, embedding_dim)
  def call(self, pair):
    target, context = pair
    if len(target.shape) == 2:
      target = tf.squeeze(target, axis=1)
    word_emb = self.target_embedding(target)
    context_emb = self.context_embedding(context)
    dots = tf.einsum('be,bce->bc', word_emb, context_emb)
    return dots
targets = np.array([target] * 16); contexts = np.stack([context.numpy()] * 16); labels = np.stack([label.numpy()] * 16)
dataset = tf.data.Dataset.from_tensor_slices(((targets, contexts), labels)).shuffle(16).batch(4, drop_remainder=True)
word2vec = Word2Vec(vocab_size, 8)
word2vec.compile(optimizer='adam', loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True), metrics=['accuracy'])
tensorboard_callback = tf.keras.callbacks.TensorBoard(log_dir="logs_w2v")
word2vec.fit(dataset, epochs=2, callbacks=[tensorboard_callback])
weights = word2vec.get_layer('w2v_embedding').get_weights()[0]

# structured data with preprocessing layers (dict of columns instead of a DataFrame)
rng = np.random.default_rng(8)
n = 64
columns = {"Age": rng.integers(1, 100, n).astype(np.int64), "Fee": rng.random(n).astype(np.float32) * 100,
           "Type": rng.choice(["Cat", "Dog"], n).astype(object), "Color1": rng.choice(["Black", "Brown", "White"], n).astype(object)}
target = rng.integers(0, 2, n)
def df_to_dataset(columns, target, shuffle=True, batch_size=32):
  ds = tf.data.Dataset.from_tensor_slices((dict(columns), target))
  if shuffle:
    ds = ds.shuffle(buffer_size=n)
  ds = ds.batch(batch_size)
  ds = ds.prefetch(batch_size)
  return ds
def get_normalization_layer(name, dataset):
  normalizer = layers.Normalization(axis=None)
  feature_ds = dataset.map(lambda x, y: x[name])
  normalizer.adapt(feature_ds)
  return normalizer
def get_category_encoding_layer(name, dataset, dtype, max_tokens=None):
  if dtype == 'string':
    index = layers.StringLookup(max_tokens=max_tokens)
  else:
    index = layers.IntegerLookup(max_tokens=max_tokens)
  feature_ds = dataset.map(lambda x, y: x[name])
  index.adapt(feature_ds)
  encoder = layers.CategoryEncoding(num_tokens=index.vocabulary_size())
  return lambda feature: encoder(index(feature))
train_ds = df_to_dataset(columns, target, batch_size=16)
all_inputs = []
encoded_features = []
for header in ['Fee']:
  numeric_col = tf.keras.Input(shape=(1,), name=header)
  normalization_layer = get_normalization_layer(header, train_ds)
  encoded_numeric_col = normalization_layer(numeric_col)
  all_inputs.append(numeric_col)
  encoded_features.append(encoded_numeric_col)
age_col = tf.keras.Input(shape=(1,), name='Age', dtype='int64')
encoding_layer = get_category_encoding_layer(name='Age', dataset=train_ds, dtype='int64', max_tokens=5)
encoded_age_col = encoding_layer(age_col)
all_inputs.append(age_col)
encoded_features.append(encoded_age_col)
for header in ['Type', 'Color1']:
  categorical_col = tf.keras.Input(shape=(1,), name=header, dtype='string')
  encoding_layer = get_category_encoding_layer(name=header, dataset=train_ds, dtype='string', max_tokens=5)
  encoded_categorical_col = encoding_layer(categorical_col)
  all_inputs.append(categorical_col)
  encoded_features.append(encoded_categorical_col)
all_features = tf.keras.layers.concatenate(encoded_features)
x = tf.keras.layers.Dense(32, activation="relu")(all_features)
x = tf.keras.layers.Dropout(0.5)(x)
output = tf.keras.layers.Dense(1)(x)
model = tf.keras.Model(all_inputs, output)
model.compile(optimizer='adam', loss=tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
model.fit(train_ds, epochs=2, validation_data=train_ds)
model.save('my_pet_classifier.keras')
reloaded_model = tf.keras.models.load_model('my_pet_classifier.keras')
sample = {'Type': 'Cat', 'Age': 3, 'Color1': 'Black', 'Fee': 100}
input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}
predictions = reloaded_model.predict(input_dict)
prob = tf.nn.sigmoid(predictions[0][0])
print("This particular pet had a %.1f percent probability of getting adopted." % (100 * prob))

# overfit and underfit pieces
lr_schedule = tf.keras.optimizers.schedules.InverseTimeDecay(0.001, decay_steps=10, decay_rate=1, staircase=False)
def get_optimizer():
  return tf.keras.optimizers.Adam(lr_schedule)
FEATURES = 28
l2_model = tf.keras.Sequential([
    layers.Dense(16, activation='elu', kernel_regularizer=tf.keras.regularizers.l2(0.001), input_shape=(FEATURES,)),
    layers.Dropout(0.5),
    layers.Dense(16, activation='elu', kernel_regularizer=tf.keras.regularizers.l2(0.001)),
    layers.Dense(1)])
l2_model.compile(optimizer=get_optimizer(), loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                 metrics=[tf.keras.metrics.BinaryCrossentropy(from_logits=True, name='binary_crossentropy'), 'accuracy'])
packed = tf.data.Dataset.from_tensor_slices((rng.normal(size=(64, FEATURES)).astype(np.float32), rng.integers(0, 2, (64, 1)).astype(np.float32)))
hist = l2_model.fit(packed.cache().shuffle(64).repeat().batch(16), steps_per_epoch=4, epochs=3,
                    validation_data=packed.batch(16),
                    callbacks=[tf.keras.callbacks.EarlyStopping(monitor='val_binary_crossentropy', patience=200), tf.keras.callbacks.TensorBoard('logs_reg')], verbose=0)
print(sorted(hist.history))

# customizing fit
class CustomModel(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}
inputs = tf.keras.Input(shape=(32,))
outputs = tf.keras.layers.Dense(1)(inputs)
model = CustomModel(inputs, outputs)
model.compile(optimizer="adam", loss="mse", metrics=["mae"])
x = np.random.random((100, 32)); y = np.random.random((100, 1))
print(model.fit(x, y, epochs=2, verbose=0).history)
loss_tracker = tf.keras.metrics.Mean(name="loss")
mae_metric = tf.keras.metrics.MeanAbsoluteError(name="mae")
class CustomModel2(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.keras.losses.mse(y, y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        loss_tracker.update_state(loss)
        mae_metric.update_state(y, y_pred)
        return {"loss": loss_tracker.result(), "mae": mae_metric.result()}
    @property
    def metrics(self):
        return [loss_tracker, mae_metric]
    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        loss = tf.keras.losses.mse(y, y_pred)
        loss_tracker.update_state(loss); mae_metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}
model = CustomModel2(inputs, outputs)
model.compile(optimizer="adam")
print(model.fit(x, y, epochs=2, verbose=0).history, model.evaluate(x, y, verbose=0))

# custom training walkthrough
features = rng.normal(size=(60, 4)).astype(np.float32); labels = rng.integers(0, 3, 60)
train_dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)
model = tf.keras.Sequential([
  tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
  tf.keras.layers.Dense(10, activation=tf.nn.relu),
  tf.keras.layers.Dense(3)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
def loss(model, x, y, training):
  y_ = model(x, training=training)
  return loss_object(y_true=y, y_pred=y_)
def grad(model, inputs, targets):
  with tf.GradientTape() as tape:
    loss_value = loss(model, inputs, targets, training=True)
  return loss_value, tape.gradient(loss_value, model.trainable_variables)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
for epoch in range(3):
  epoch_loss_avg = tf.keras.metrics.Mean()
  epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
  for x, y in train_dataset:
    loss_value, grads = grad(model, x, y)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    epoch_loss_avg.update_state(loss_value)
    epoch_accuracy.update_state(y, model(x, training=True))
  print("Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(epoch, epoch_loss_avg.result(), epoch_accuracy.result()))
test_accuracy = tf.keras.metrics.Accuracy()
for (x, y) in train_dataset:
  logits = model(x, training=False)
  prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
  test_accuracy(prediction, y)
print("Test set accuracy: {:.3%}".format(test_accuracy.result()))

# distributed training with Keras
strategy = tf.distribute.MirroredStrategy()
print('Number of devices: {}'.format(strategy.num_replicas_in_sync))
with strategy.scope():
  model = tf.keras.Sequential([
      tf.keras.layers.Conv2D(8, 3, activation='relu', input_shape=(28, 28, 1)),
      tf.keras.layers.MaxPooling2D(),
      tf.keras.layers.Flatten(),
      tf.keras.layers.Dense(16, activation='relu'),
      tf.keras.layers.Dense(10)])
  model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.Adam(), metrics=['accuracy'])
def scale(image, label):
  image = tf.cast(image, tf.float32)
  image /= 255
  return image, label
mnist_train = tf.data.Dataset.from_tensor_slices((rng.integers(0, 255, (64, 28, 28, 1)).astype(np.uint8), rng.integers(0, 10, 64)))
train_dataset = mnist_train.map(scale).cache().shuffle(64).batch(16)
checkpoint_dir = 'training_checkpoints_dist'
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch}")
def decay(epoch):
  if epoch < 3:
    return 1e-3
  return 1e-4
class PrintLR(tf.keras.callbacks.Callback):
  def on_epoch_end(self, epoch, logs=None):
    print('\nLearning rate for epoch {} is {}'.format(epoch + 1, model.optimizer.learning_rate.numpy()))
callbacks = [tf.keras.callbacks.TensorBoard(log_dir='logs_dist'),
    tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_prefix + ".weights.h5", save_weights_only=True),
    tf.keras.callbacks.LearningRateScheduler(decay), PrintLR()]
model.fit(train_dataset, epochs=2, callbacks=callbacks)
model.load_weights(os.path.join(checkpoint_dir, "ckpt_2.weights.h5"))
eval_loss, eval_acc = model.evaluate(train_dataset)
path = 'saved_model_dist/'
model.export(path)
unreplicated_model = tf.saved_model.load(path)
print(unreplicated_model.serve(tf.zeros([2, 28, 28, 1])).shape)

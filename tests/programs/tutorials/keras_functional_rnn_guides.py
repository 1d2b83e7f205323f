# Keras guides "The Functional API" and "Working with RNNs" (TF 2.21 / Keras 3), with random
# stand-ins for the datasets. Adapted: left out the RNN guide's NestedCell section, which TF
# 2.21 itself rejects (its build() indexes shapes Keras 3 no longer passes).
import numpy as np
import ndflow as tf
keras = tf.keras
layers = keras.layers

inputs = keras.Input(shape=(784,))
print(inputs.shape)
dense = layers.Dense(64, activation="relu")
x = dense(inputs)
x = layers.Dense(64, activation="relu")(x)
outputs = layers.Dense(10)(x)
model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")
model.summary()
x_train = np.random.RandomState(0).rand(256, 784).astype("float32")
y_train = np.random.RandomState(1).randint(0, 10, 256)
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.RMSprop(), metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2, verbose=0)
print(sorted(history.history))
test_scores = model.evaluate(x_train, y_train, verbose=0)
print(len(test_scores))

encoder_input = keras.Input(shape=(28, 28, 1), name="img")
x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.MaxPooling2D(3)(x)
x = layers.Conv2D(32, 3, activation="relu")(x)
x = layers.Conv2D(16, 3, activation="relu")(x)
encoder_output = layers.GlobalMaxPooling2D()(x)
encoder = keras.Model(encoder_input, encoder_output, name="encoder")
encoder.summary()
x = layers.Reshape((4, 4, 1))(encoder_output)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
x = layers.UpSampling2D(3)(x)
x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)
autoencoder = keras.Model(encoder_input, decoder_output, name="autoencoder")
autoencoder.summary()

num_tags = 12
num_words = 10000
num_departments = 4
title_input = keras.Input(shape=(None,), name="title")
body_input = keras.Input(shape=(None,), name="body")
tags_input = keras.Input(shape=(num_tags,), name="tags")
title_features = layers.Embedding(num_words, 64)(title_input)
body_features = layers.Embedding(num_words, 64)(body_input)
title_features = layers.LSTM(128)(title_features)
body_features = layers.LSTM(32)(body_features)
x = layers.concatenate([title_features, body_features, tags_input])
priority_pred = layers.Dense(1, name="priority")(x)
department_pred = layers.Dense(num_departments, name="department")(x)
model = keras.Model(inputs=[title_input, body_input, tags_input], outputs={"priority": priority_pred, "department": department_pred})
model.summary()
model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
              loss={"priority": keras.losses.BinaryCrossentropy(from_logits=True),
                    "department": keras.losses.CategoricalCrossentropy(from_logits=True)},
              loss_weights={"priority": 1.0, "department": 0.2})
title_data = np.random.randint(num_words, size=(64, 10))
body_data = np.random.randint(num_words, size=(64, 100))
tags_data = np.random.randint(2, size=(64, num_tags)).astype("float32")
priority_targets = np.random.random(size=(64, 1))
dept_targets = np.random.randint(2, size=(64, num_departments))
h = model.fit({"title": title_data, "body": body_data, "tags": tags_data},
          {"priority": priority_targets, "department": dept_targets}, epochs=2, batch_size=32, verbose=0)
print(sorted(h.history))

inputs = keras.Input(shape=(32, 32, 3), name="img")
x = layers.Conv2D(32, 3, activation="relu")(inputs)
x = layers.Conv2D(64, 3, activation="relu")(x)
block_1_output = layers.MaxPooling2D(3)(x)
x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_1_output)
x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
block_2_output = layers.add([x, block_1_output])
x = layers.Conv2D(64, 3, activation="relu")(block_2_output)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dense(256, activation="relu")(x)
x = layers.Dropout(0.5)(x)
outputs = layers.Dense(10)(x)
model = keras.Model(inputs, outputs, name="toy_resnet")
model.summary()
print(len(model.layers), [l.name for l in model.layers][:4])
features_list = [layer.output for layer in model.layers]
feat_extraction_model = keras.Model(inputs=model.input, outputs=features_list)
img = np.random.random((3, 32, 32, 3)).astype("float32")
extracted_features = feat_extraction_model(img)
print(len(extracted_features), extracted_features[-1].shape)

class CustomDense(layers.Layer):
    def __init__(self, units=32):
        super().__init__()
        self.units = units
    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)
    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b
    def get_config(self):
        return {"units": self.units}
inputs = keras.Input((4,))
outputs = CustomDense(10)(inputs)
model = keras.Model(inputs, outputs)
config = model.get_config()
new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
print(type(new_model).__name__, new_model.layers[1].units)
print(model.get_layer(index=1).name.startswith("custom_dense"))

keras.utils.set_random_seed(3)

model = keras.Sequential()
model.add(layers.Input(shape=(None,)))
model.add(layers.Embedding(input_dim=1000, output_dim=64))
model.add(layers.LSTM(128))
model.add(layers.Dense(10))
model.summary()

model = keras.Sequential()
model.add(layers.Input(shape=(None,)))
model.add(layers.Embedding(input_dim=1000, output_dim=64))
model.add(layers.GRU(256, return_sequences=True))
model.add(layers.SimpleRNN(128))
model.add(layers.Dense(10))
model.summary()

encoder_vocab = 1000
decoder_vocab = 2000
encoder_input = layers.Input(shape=(None,))
encoder_embedded = layers.Embedding(input_dim=encoder_vocab, output_dim=64)(encoder_input)
output, state_h, state_c = layers.LSTM(64, return_state=True, name="encoder")(encoder_embedded)
encoder_state = [state_h, state_c]
decoder_input = layers.Input(shape=(None,))
decoder_embedded = layers.Embedding(input_dim=decoder_vocab, output_dim=64)(decoder_input)
decoder_output = layers.LSTM(64, name="decoder")(decoder_embedded, initial_state=encoder_state)
output = layers.Dense(10)(decoder_output)
model = keras.Model([encoder_input, decoder_input], output)
model.summary()

paragraph1 = np.random.random((20, 10, 50)).astype(np.float32)
paragraph2 = np.random.random((20, 10, 50)).astype(np.float32)
paragraph3 = np.random.random((20, 10, 50)).astype(np.float32)
lstm_layer = layers.LSTM(64, stateful=True)
output = lstm_layer(paragraph1)
output = lstm_layer(paragraph2)
output = lstm_layer(paragraph3)
print(output.shape)
lstm_layer.reset_states()
existing_state = lstm_layer.states
new_lstm_layer = layers.LSTM(64)
new_output = new_lstm_layer(paragraph3, initial_state=existing_state)
print(new_output.shape, len(existing_state))

model = keras.Sequential()
model.add(layers.Input(shape=(5, 10)))
model.add(layers.Bidirectional(layers.LSTM(64, return_sequences=True)))
model.add(layers.Bidirectional(layers.LSTM(32)))
model.add(layers.Dense(10))
model.summary()

# masking
inp = keras.Input((None,))
x = layers.Embedding(100, 8, mask_zero=True)(inp)
x = layers.LSTM(4)(x)
m = keras.Model(inp, x)
print(m(np.array([[1, 2, 0, 0], [3, 0, 0, 0]])).shape)
print(layers.Embedding(100, 8, mask_zero=True).compute_mask(np.array([[1, 0]])))
print("keras guides done")

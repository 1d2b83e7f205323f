# Source: keras-team/keras-io, guides/functional_api.py, Keras 3 version
#   (guides/keras_core/functional_api.py; "The Functional API", fchollet, last modified
#   2023/06/25), https://keras.io/guides/functional_api/  License: Apache-2.0.
# Changed: synthetic_data.mnist_load_data() and cifar10_load_data() stand in for
#   keras.datasets (1,024 / 256 images each), so the MNIST reshapes take -1 instead of
#   60000 / 10000 rows; the multi-input model trains on 128 instead of 1,280 dummy tickets
#   and the toy ResNet on the first 256 instead of 1,000 images;
#   keras.utils.plot_model (pydot/graphviz) and the VGG19 feature extraction (ImageNet
#   weights download) are left out; the code runs in main(), which returns the fits' last
#   metrics, the evaluations and the shapes and counts the guide prints.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F811, F841, I001, B007, B018
import numpy as np
import keras
from keras import layers
from keras import ops

from synthetic_data import cifar10_load_data, mnist_load_data


def main():
    out = {}
    inputs = keras.Input(shape=(784,))

    # Just for demonstration purposes.
    img_inputs = keras.Input(shape=(32, 32, 3))

    inputs.shape

    inputs.dtype

    dense = layers.Dense(64, activation="relu")
    x = dense(inputs)

    x = layers.Dense(64, activation="relu")(x)
    outputs = layers.Dense(10)(x)

    model = keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")

    model.summary()

    (x_train, y_train), (x_test, y_test) = mnist_load_data()

    x_train = x_train.reshape(-1, 784).astype("float32") / 255
    x_test = x_test.reshape(-1, 784).astype("float32") / 255

    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=keras.optimizers.RMSprop(),
        metrics=["accuracy"],
    )

    history = model.fit(x_train, y_train, batch_size=64, epochs=2, validation_split=0.2)
    out.update({"mlp_" + k: v[-1] for k, v in history.history.items()})

    test_scores = model.evaluate(x_test, y_test, verbose=2)
    print("Test loss:", test_scores[0])
    print("Test accuracy:", test_scores[1])
    out.update({"mlp_test_loss": test_scores[0], "mlp_test_accuracy": test_scores[1]})

    model.save("my_model.keras")
    del model
    # Recreate the exact same model purely from the file:
    model = keras.models.load_model("my_model.keras")
    reloaded_scores = model.evaluate(x_test, y_test, verbose=2)
    out.update({"mlp_reloaded_test_loss": reloaded_scores[0]})

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
    out["autoencoder_params_count"] = autoencoder.count_params()
    out["autoencoder_output_rows_count"] = autoencoder.output.shape[1]

    encoder_input = keras.Input(shape=(28, 28, 1), name="original_img")
    x = layers.Conv2D(16, 3, activation="relu")(encoder_input)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.MaxPooling2D(3)(x)
    x = layers.Conv2D(32, 3, activation="relu")(x)
    x = layers.Conv2D(16, 3, activation="relu")(x)
    encoder_output = layers.GlobalMaxPooling2D()(x)

    encoder = keras.Model(encoder_input, encoder_output, name="encoder")
    encoder.summary()

    decoder_input = keras.Input(shape=(16,), name="encoded_img")
    x = layers.Reshape((4, 4, 1))(decoder_input)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu")(x)
    x = layers.UpSampling2D(3)(x)
    x = layers.Conv2DTranspose(16, 3, activation="relu")(x)
    decoder_output = layers.Conv2DTranspose(1, 3, activation="relu")(x)

    decoder = keras.Model(decoder_input, decoder_output, name="decoder")
    decoder.summary()

    autoencoder_input = keras.Input(shape=(28, 28, 1), name="img")
    encoded_img = encoder(autoencoder_input)
    decoded_img = decoder(encoded_img)
    autoencoder = keras.Model(autoencoder_input, decoded_img, name="autoencoder")
    autoencoder.summary()
    out["nested_autoencoder_layers_count"] = len(autoencoder.layers)
    out["nested_autoencoder_output_mean"] = float(
        np.mean(autoencoder.predict(x_test[:32].reshape(-1, 28, 28, 1))))

    def get_model():
        inputs = keras.Input(shape=(128,))
        outputs = layers.Dense(1)(inputs)
        return keras.Model(inputs, outputs)

    model1 = get_model()
    model2 = get_model()
    model3 = get_model()

    inputs = keras.Input(shape=(128,))
    y1 = model1(inputs)
    y2 = model2(inputs)
    y3 = model3(inputs)
    outputs = layers.average([y1, y2, y3])
    ensemble_model = keras.Model(inputs=inputs, outputs=outputs)
    out["ensemble_output_sum"] = float(np.sum(ensemble_model(np.ones((2, 128)))))

    num_tags = 12  # Number of unique issue tags
    num_words = 10000  # Size of vocabulary obtained when preprocessing text data
    num_departments = 4  # Number of departments for predictions

    title_input = keras.Input(
        shape=(None,), name="title"
    )  # Variable-length sequence of ints
    body_input = keras.Input(shape=(None,), name="body")  # Variable-length sequence of ints
    tags_input = keras.Input(
        shape=(num_tags,), name="tags"
    )  # Binary vectors of size `num_tags`

    # Embed each word in the title into a 64-dimensional vector
    title_features = layers.Embedding(num_words, 64)(title_input)
    # Embed each word in the text into a 64-dimensional vector
    body_features = layers.Embedding(num_words, 64)(body_input)

    # Reduce sequence of embedded words in the title into a single 128-dimensional vector
    title_features = layers.LSTM(128)(title_features)
    # Reduce sequence of embedded words in the body into a single 32-dimensional vector
    body_features = layers.LSTM(32)(body_features)

    # Merge all available features into a single large vector via concatenation
    x = layers.concatenate([title_features, body_features, tags_input])

    # Stick a logistic regression for priority prediction on top of the features
    priority_pred = layers.Dense(1, name="priority")(x)
    # Stick a department classifier on top of the features
    department_pred = layers.Dense(num_departments, name="department")(x)

    # Instantiate an end-to-end model predicting both priority and department
    model = keras.Model(
        inputs=[title_input, body_input, tags_input],
        outputs={"priority": priority_pred, "department": department_pred},
    )

    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss=[
            keras.losses.BinaryCrossentropy(from_logits=True),
            keras.losses.CategoricalCrossentropy(from_logits=True),
        ],
        loss_weights=[1.0, 0.2],
    )

    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss={
            "priority": keras.losses.BinaryCrossentropy(from_logits=True),
            "department": keras.losses.CategoricalCrossentropy(from_logits=True),
        },
        loss_weights={"priority": 1.0, "department": 0.2},
    )

    # Dummy input data
    title_data = np.random.randint(num_words, size=(128, 10))
    body_data = np.random.randint(num_words, size=(128, 100))
    tags_data = np.random.randint(2, size=(128, num_tags)).astype("float32")

    # Dummy target data
    priority_targets = np.random.random(size=(128, 1))
    dept_targets = np.random.randint(2, size=(128, num_departments))

    history = model.fit(
        {"title": title_data, "body": body_data, "tags": tags_data},
        {"priority": priority_targets, "department": dept_targets},
        epochs=2,
        batch_size=32,
    )
    out.update({"tickets_" + k: v[-1] for k, v in history.history.items()})
    out["tickets_history_keys_count"] = len(history.history)

    inputs = keras.Input(shape=(32, 32, 3), name="img")
    x = layers.Conv2D(32, 3, activation="relu")(inputs)
    x = layers.Conv2D(64, 3, activation="relu")(x)
    block_1_output = layers.MaxPooling2D(3)(x)

    x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_1_output)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
    block_2_output = layers.add([x, block_1_output])

    x = layers.Conv2D(64, 3, activation="relu", padding="same")(block_2_output)
    x = layers.Conv2D(64, 3, activation="relu", padding="same")(x)
    block_3_output = layers.add([x, block_2_output])

    x = layers.Conv2D(64, 3, activation="relu")(block_3_output)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(256, activation="relu")(x)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(10)(x)

    model = keras.Model(inputs, outputs, name="toy_resnet")
    model.summary()

    (x_train, y_train), (x_test, y_test) = cifar10_load_data()

    x_train = x_train.astype("float32") / 255.0
    x_test = x_test.astype("float32") / 255.0
    y_train = keras.utils.to_categorical(y_train, 10)
    y_test = keras.utils.to_categorical(y_test, 10)

    model.compile(
        optimizer=keras.optimizers.RMSprop(1e-3),
        loss=keras.losses.CategoricalCrossentropy(from_logits=True),
        metrics=["acc"],
    )
    # We restrict the data to the first 1000 samples so as to limit execution time
    # on Colab. Try to train on the entire dataset until convergence!
    history = model.fit(
        x_train[:256],
        y_train[:256],
        batch_size=64,
        epochs=1,
        validation_split=0.2,
    )
    out.update({"resnet_" + k.replace("acc", "accuracy"): v[-1]
                for k, v in history.history.items()})
    out["resnet_params_count"] = model.count_params()

    # Embedding for 1000 unique words mapped to 128-dimensional vectors
    shared_embedding = layers.Embedding(1000, 128)

    # Variable-length sequence of integers
    text_input_a = keras.Input(shape=(None,), dtype="int32")

    # Variable-length sequence of integers
    text_input_b = keras.Input(shape=(None,), dtype="int32")

    # Reuse the same layer to encode both inputs
    encoded_input_a = shared_embedding(text_input_a)
    encoded_input_b = shared_embedding(text_input_b)
    shared = keras.Model([text_input_a, text_input_b], [encoded_input_a, encoded_input_b])
    a, b = shared([np.array([[1, 2, 3]]), np.array([[1, 2, 3]])])
    out["shared_embedding_weights_count"] = len(shared.weights)
    out["shared_embedding_max_diff"] = float(np.max(np.abs(np.asarray(a) - np.asarray(b))))

    class CustomDense(layers.Layer):
        def __init__(self, units=32):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(
                shape=(input_shape[-1], self.units),
                initializer="random_normal",
                trainable=True,
            )
            self.b = self.add_weight(
                shape=(self.units,), initializer="random_normal", trainable=True
            )

        def call(self, inputs):
            return ops.matmul(inputs, self.w) + self.b

    inputs = keras.Input((4,))
    outputs = CustomDense(10)(inputs)

    model = keras.Model(inputs, outputs)

    class CustomDense(layers.Layer):
        def __init__(self, units=32):
            super().__init__()
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(
                shape=(input_shape[-1], self.units),
                initializer="random_normal",
                trainable=True,
            )
            self.b = self.add_weight(
                shape=(self.units,), initializer="random_normal", trainable=True
            )

        def call(self, inputs):
            return ops.matmul(inputs, self.w) + self.b

        def get_config(self):
            return {"units": self.units}

    inputs = keras.Input((4,))
    outputs = CustomDense(10)(inputs)

    model = keras.Model(inputs, outputs)
    config = model.get_config()

    new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
    out["custom_dense_params_count"] = new_model.count_params()

    units = 32
    timesteps = 10
    input_dim = 5

    # Define a Functional model
    inputs = keras.Input((None, units))
    x = layers.GlobalAveragePooling1D()(inputs)
    outputs = layers.Dense(1)(x)
    model = keras.Model(inputs, outputs)

    class CustomRNN(layers.Layer):
        def __init__(self):
            super().__init__()
            self.units = units
            self.projection_1 = layers.Dense(units=units, activation="tanh")
            self.projection_2 = layers.Dense(units=units, activation="tanh")
            # Our previously-defined Functional model
            self.classifier = model

        def call(self, inputs):
            outputs = []
            state = ops.zeros(shape=(inputs.shape[0], self.units))
            for t in range(inputs.shape[1]):
                x = inputs[:, t, :]
                h = self.projection_1(x)
                y = h + self.projection_2(state)
                state = y
                outputs.append(y)
            features = ops.stack(outputs, axis=1)
            print(features.shape)
            return self.classifier(features)

    rnn_model = CustomRNN()
    _ = rnn_model(ops.zeros((1, timesteps, input_dim)))
    out["custom_rnn_output"] = float(np.sum(_))

    units = 32
    timesteps = 10
    input_dim = 5
    batch_size = 16

    class CustomRNN(layers.Layer):
        def __init__(self):
            super().__init__()
            self.units = units
            self.projection_1 = layers.Dense(units=units, activation="tanh")
            self.projection_2 = layers.Dense(units=units, activation="tanh")
            self.classifier = layers.Dense(1)

        def call(self, inputs):
            outputs = []
            state = ops.zeros(shape=(inputs.shape[0], self.units))
            for t in range(inputs.shape[1]):
                x = inputs[:, t, :]
                h = self.projection_1(x)
                y = h + self.projection_2(state)
                state = y
                outputs.append(y)
            features = ops.stack(outputs, axis=1)
            return self.classifier(features)

    # Note that you specify a static batch size for the inputs with the `batch_shape`
    # arg, because the inner computation of `CustomRNN` requires a static batch size
    # (when you create the `state` zeros tensor).
    inputs = keras.Input(batch_shape=(batch_size, timesteps, input_dim))
    x = layers.Conv1D(32, 3)(inputs)
    outputs = CustomRNN()(x)

    model = keras.Model(inputs, outputs)
    out["conv_rnn_output_steps_count"] = model.output.shape[1]

    rnn_model = CustomRNN()
    _ = rnn_model(ops.zeros((1, 10, 5)))
    out["custom_rnn_2_output"] = float(np.sum(_))
    return out

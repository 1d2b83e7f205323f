# Source: keras-team/keras-io, examples/vision/siamese_contrastive.py ("Image similarity
#   estimation using a Siamese Network with a contrastive loss", Mehdi, last modified
#   2021/05/06), https://keras.io/examples/vision/siamese_contrastive/  License: Apache-2.0.
# Changed: synthetic_data.mnist_load_data() stands in for keras.datasets.mnist.load_data()
#   (1,024 / 256 digits), so the train/validation split is at 512 instead of 30,000; epochs
#   10 -> 2; the matplotlib visualizations (visualize, plt_metric) are left out (no
#   matplotlib here); the code runs in main(), which returns the last epoch's metrics, the
#   test loss and accuracy and the mean prediction on the test pairs.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001, A001
import random
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

from synthetic_data import mnist_load_data


def main():
    epochs = 2
    batch_size = 16
    margin = 1  # Margin for constrastive loss.

    (x_train_val, y_train_val), (x_test, y_test) = mnist_load_data()

    # Change the data type to a floating point format
    x_train_val = x_train_val.astype("float32")
    x_test = x_test.astype("float32")

    # Keep 50% of train_val  in validation set
    x_train, x_val = x_train_val[:512], x_train_val[512:]
    y_train, y_val = y_train_val[:512], y_train_val[512:]
    del x_train_val, y_train_val

    def make_pairs(x, y):
        """Creates a tuple containing image pairs with corresponding label.

        Arguments:
            x: List containing images, each index in this list corresponds to one image.
            y: List containing labels, each label with datatype of `int`.

        Returns:
            Tuple containing two numpy arrays as (pairs_of_samples, labels),
            where pairs_of_samples' shape is (2len(x), 2,n_features_dims) and
            labels are a binary array of shape (2len(x)).
        """

        num_classes = max(y) + 1
        digit_indices = [np.where(y == i)[0] for i in range(num_classes)]

        pairs = []
        labels = []

        for idx1 in range(len(x)):
            # add a matching example
            x1 = x[idx1]
            label1 = y[idx1]
            idx2 = random.choice(digit_indices[label1])
            x2 = x[idx2]

            pairs += [[x1, x2]]
            labels += [1]

            # add a non-matching example
            label2 = random.randint(0, num_classes - 1)
            while label2 == label1:
                label2 = random.randint(0, num_classes - 1)

            idx2 = random.choice(digit_indices[label2])
            x2 = x[idx2]

            pairs += [[x1, x2]]
            labels += [0]

        return np.array(pairs), np.array(labels).astype("float32")

    # make train pairs
    pairs_train, labels_train = make_pairs(x_train, y_train)

    # make validation pairs
    pairs_val, labels_val = make_pairs(x_val, y_val)

    # make test pairs
    pairs_test, labels_test = make_pairs(x_test, y_test)

    x_train_1 = pairs_train[:, 0]  # x_train_1.shape is (60000, 28, 28)
    x_train_2 = pairs_train[:, 1]

    x_val_1 = pairs_val[:, 0]  # x_val_1.shape = (60000, 28, 28)
    x_val_2 = pairs_val[:, 1]

    x_test_1 = pairs_test[:, 0]  # x_test_1.shape = (20000, 28, 28)
    x_test_2 = pairs_test[:, 1]

    # Provided two tensors t1 and t2
    # Euclidean distance = sqrt(sum(square(t1-t2)))
    def euclidean_distance(vects):
        """Find the Euclidean distance between two vectors.

        Arguments:
            vects: List containing two tensors of same length.

        Returns:
            Tensor containing euclidean distance
            (as floating point value) between vectors.
        """

        x, y = vects
        sum_square = tf.math.reduce_sum(tf.math.square(x - y), axis=1, keepdims=True)
        return tf.math.sqrt(tf.math.maximum(sum_square, tf.keras.backend.epsilon()))

    input = layers.Input((28, 28, 1))
    x = tf.keras.layers.BatchNormalization()(input)
    x = layers.Conv2D(4, (5, 5), activation="tanh")(x)
    x = layers.AveragePooling2D(pool_size=(2, 2))(x)
    x = layers.Conv2D(16, (5, 5), activation="tanh")(x)
    x = layers.AveragePooling2D(pool_size=(2, 2))(x)
    x = layers.Flatten()(x)

    x = tf.keras.layers.BatchNormalization()(x)
    x = layers.Dense(10, activation="tanh")(x)
    embedding_network = keras.Model(input, x)

    input_1 = layers.Input((28, 28, 1))
    input_2 = layers.Input((28, 28, 1))

    # As mentioned above, Siamese Network share weights between
    # tower networks (sister networks). To allow this, we will use
    # same embedding network for both tower networks.
    tower_1 = embedding_network(input_1)
    tower_2 = embedding_network(input_2)

    merge_layer = layers.Lambda(euclidean_distance)([tower_1, tower_2])
    normal_layer = tf.keras.layers.BatchNormalization()(merge_layer)
    output_layer = layers.Dense(1, activation="sigmoid")(normal_layer)
    siamese = keras.Model(inputs=[input_1, input_2], outputs=output_layer)

    def loss(margin=1):
        """Provides 'constrastive_loss' an enclosing scope with variable 'margin'.

        Arguments:
            margin: Integer, defines the baseline for distance for which pairs
                    should be classified as dissimilar. - (default is 1).

        Returns:
            'constrastive_loss' function with data ('margin') attached.
        """

        # Contrastive loss = mean( (1-true_value) * square(prediction) +
        #                         true_value * square( max(margin-prediction, 0) ))
        def contrastive_loss(y_true, y_pred):
            """Calculates the constrastive loss.

            Arguments:
                y_true: List of labels, each label is of type float32.
                y_pred: List of predictions of same length as of y_true,
                        each label is of type float32.

            Returns:
                A tensor containing constrastive loss as floating point value.
            """

            square_pred = tf.math.square(y_pred)
            margin_square = tf.math.square(tf.math.maximum(margin - (y_pred), 0))
            return tf.math.reduce_mean(
                (1 - y_true) * square_pred + (y_true) * margin_square
            )

        return contrastive_loss

    siamese.compile(loss=loss(margin=margin), optimizer="RMSprop", metrics=["accuracy"])
    siamese.summary()

    history = siamese.fit(
        [x_train_1, x_train_2],
        labels_train,
        validation_data=([x_val_1, x_val_2], labels_val),
        batch_size=batch_size,
        epochs=epochs,
    )

    results = siamese.evaluate([x_test_1, x_test_2], labels_test)
    print("test loss, test acc:", results)

    predictions = siamese.predict([x_test_1, x_test_2])
    return {"test_loss": results[0], "test_accuracy": results[1],
            "prediction_mean": float(np.mean(predictions)),
            "embedding_weights_count": len(embedding_network.weights),
            "siamese_weights_count": len(siamese.weights),
            **{k: v[-1] for k, v in history.history.items()}}

# Source: fchollet/deep-learning-with-python-notebooks, chapter07_deep-dive-keras.ipynb
#   (Deep Learning with Python, 3rd edition, F. Chollet & M. Watson), sections "Multi-input,
#   multi-output models", "Training a multi-input, multi-output model", "Feature extraction
#   with a Functional model" and "Rewriting our previous example as a subclassed model",
#   https://github.com/fchollet/deep-learning-with-python-notebooks  License: MIT.
# Changed: the notebook's KERAS_BACKEND cell says "jax"; here "tensorflow" (the README's
#   backend choice); num_samples 1280 -> 512 (the data is the notebook's own random
#   arrays); the plot_model cells (graphviz) and the bare-expression display cells are left
#   out; the code runs in main(), which returns each model's evaluate() list (in the order
#   Keras 3 gives it) and the means of two predictions.
import os

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras
from keras import layers


def main():
    vocabulary_size = 10000
    num_tags = 100
    num_departments = 4

    title = keras.Input(shape=(vocabulary_size,), name="title")
    text_body = keras.Input(shape=(vocabulary_size,), name="text_body")
    tags = keras.Input(shape=(num_tags,), name="tags")

    features = layers.Concatenate()([title, text_body, tags])
    features = layers.Dense(64, activation="relu", name="dense_features")(features)

    priority = layers.Dense(1, activation="sigmoid", name="priority")(features)
    department = layers.Dense(
        num_departments, activation="softmax", name="department"
    )(features)

    model = keras.Model(
        inputs=[title, text_body, tags],
        outputs=[priority, department],
    )

    import numpy as np

    num_samples = 512

    title_data = np.random.randint(0, 2, size=(num_samples, vocabulary_size))
    text_body_data = np.random.randint(0, 2, size=(num_samples, vocabulary_size))
    tags_data = np.random.randint(0, 2, size=(num_samples, num_tags))

    priority_data = np.random.random(size=(num_samples, 1))
    department_data = np.random.randint(0, num_departments, size=(num_samples, 1))

    model.compile(
        optimizer="adam",
        loss=["mean_squared_error", "sparse_categorical_crossentropy"],
        metrics=[["mean_absolute_error"], ["accuracy"]],
    )
    model.fit(
        [title_data, text_body_data, tags_data],
        [priority_data, department_data],
        epochs=1,
    )
    list_eval = model.evaluate(
        [title_data, text_body_data, tags_data], [priority_data, department_data]
    )
    priority_preds, department_preds = model.predict(
        [title_data, text_body_data, tags_data]
    )

    model.compile(
        optimizer="adam",
        loss={
            "priority": "mean_squared_error",
            "department": "sparse_categorical_crossentropy",
        },
        metrics={
            "priority": ["mean_absolute_error"],
            "department": ["accuracy"],
        },
    )
    model.fit(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data},
        {"priority": priority_data, "department": department_data},
        epochs=1,
    )
    dict_eval = model.evaluate(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data},
        {"priority": priority_data, "department": department_data},
    )
    priority_preds, department_preds = model.predict(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data}
    )

    features = model.layers[4].output
    difficulty = layers.Dense(3, activation="softmax", name="difficulty")(features)

    new_model = keras.Model(
        inputs=[title, text_body, tags], outputs=[priority, department, difficulty]
    )
    difficulty_preds = new_model.predict(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data}
    )[2]

    class CustomerTicketModel(keras.Model):
        def __init__(self, num_departments):
            super().__init__()
            self.concat_layer = layers.Concatenate()
            self.mixing_layer = layers.Dense(64, activation="relu")
            self.priority_scorer = layers.Dense(1, activation="sigmoid")
            self.department_classifier = layers.Dense(
                num_departments, activation="softmax"
            )

        def call(self, inputs):
            title = inputs["title"]
            text_body = inputs["text_body"]
            tags = inputs["tags"]

            features = self.concat_layer([title, text_body, tags])
            features = self.mixing_layer(features)
            priority = self.priority_scorer(features)
            department = self.department_classifier(features)
            return priority, department

    model = CustomerTicketModel(num_departments=4)

    priority, department = model(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data}
    )

    model.compile(
        optimizer="adam",
        loss=["mean_squared_error", "sparse_categorical_crossentropy"],
        metrics=[["mean_absolute_error"], ["accuracy"]],
    )
    model.fit(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data},
        [priority_data, department_data],
        epochs=1,
    )
    subclassed_eval = model.evaluate(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data},
        [priority_data, department_data],
    )
    priority_preds, department_preds = model.predict(
        {"title": title_data, "text_body": text_body_data, "tags": tags_data}
    )
    metrics = {}
    for prefix, values in (("list", list_eval), ("dict", dict_eval),
                           ("subclassed", subclassed_eval)):
        metrics[prefix + "_count"] = len(values)
        metrics.update({f"{prefix}_{i}": v for i, v in enumerate(values)})
    metrics["difficulty_mean"] = float(np.mean(difficulty_preds[:, 0]))
    metrics["priority_pred_mean"] = float(np.mean(priority_preds))
    return metrics

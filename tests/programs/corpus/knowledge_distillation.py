# Source: keras-team/keras-io, examples/vision/knowledge_distillation.py ("Knowledge
#   Distillation", Kenneth Borup, last modified 2020/09/01),
#   https://keras.io/examples/vision/knowledge_distillation/  License: Apache-2.0.
# Changed: synthetic_data.mnist_load_data() stands in for keras.datasets.mnist.load_data()
#   (1,024 / 256 digits); the teacher's convolutions have 32 and 64 filters instead of 256
#   and 512 (the same architecture, a CPU-sized width); epochs: teacher 5 -> 2, distiller
#   and student 3 -> 2; the code runs in main(), which returns the last epoch's training
#   metrics and evaluate()'s results of the teacher, the distiller and the scratch student.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001, UP008
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
import numpy as np

from synthetic_data import mnist_load_data


def main():
    class Distiller(keras.Model):
        def __init__(self, student, teacher):
            super(Distiller, self).__init__()
            self.teacher = teacher
            self.student = student

        def compile(
            self,
            optimizer,
            metrics,
            student_loss_fn,
            distillation_loss_fn,
            alpha=0.1,
            temperature=3,
        ):
            """Configure the distiller.

            Args:
                optimizer: Keras optimizer for the student weights
                metrics: Keras metrics for evaluation
                student_loss_fn: Loss function of difference between student
                    predictions and ground-truth
                distillation_loss_fn: Loss function of difference between soft
                    student predictions and soft teacher predictions
                alpha: weight to student_loss_fn and 1-alpha to distillation_loss_fn
                temperature: Temperature for softening probability distributions.
                    Larger temperature gives softer distributions.
            """
            super(Distiller, self).compile(optimizer=optimizer, metrics=metrics)
            self.student_loss_fn = student_loss_fn
            self.distillation_loss_fn = distillation_loss_fn
            self.alpha = alpha
            self.temperature = temperature

        def train_step(self, data):
            # Unpack data
            x, y = data

            # Forward pass of teacher
            teacher_predictions = self.teacher(x, training=False)

            with tf.GradientTape() as tape:
                # Forward pass of student
                student_predictions = self.student(x, training=True)

                # Compute losses
                student_loss = self.student_loss_fn(y, student_predictions)

                # Compute scaled distillation loss from https://arxiv.org/abs/1503.02531
                # The magnitudes of the gradients produced by the soft targets scale
                # as 1/T^2, multiply them by T^2 when using both hard and soft targets.
                distillation_loss = (
                    self.distillation_loss_fn(
                        tf.nn.softmax(teacher_predictions / self.temperature, axis=1),
                        tf.nn.softmax(student_predictions / self.temperature, axis=1),
                    )
                    * self.temperature**2
                )

                loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss

            # Compute gradients
            trainable_vars = self.student.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)

            # Update weights
            self.optimizer.apply_gradients(zip(gradients, trainable_vars))

            # Update the metrics configured in `compile()`.
            self.compiled_metrics.update_state(y, student_predictions)

            # Return a dict of performance
            results = {m.name: m.result() for m in self.metrics}
            results.update(
                {"student_loss": student_loss, "distillation_loss": distillation_loss}
            )
            return results

        def test_step(self, data):
            # Unpack the data
            x, y = data

            # Compute predictions
            y_prediction = self.student(x, training=False)

            # Calculate the loss
            student_loss = self.student_loss_fn(y, y_prediction)

            # Update the metrics.
            self.compiled_metrics.update_state(y, y_prediction)

            # Return a dict of performance
            results = {m.name: m.result() for m in self.metrics}
            results.update({"student_loss": student_loss})
            return results

    # Create the teacher
    teacher = keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(alpha=0.2),
            layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
            layers.Conv2D(64, (3, 3), strides=(2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(10),
        ],
        name="teacher",
    )

    # Create the student
    student = keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(alpha=0.2),
            layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
            layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(10),
        ],
        name="student",
    )

    # Clone student for later comparison
    student_scratch = keras.models.clone_model(student)

    # Prepare the train and test dataset.
    batch_size = 64
    (x_train, y_train), (x_test, y_test) = mnist_load_data()

    # Normalize data
    x_train = x_train.astype("float32") / 255.0
    x_train = np.reshape(x_train, (-1, 28, 28, 1))

    x_test = x_test.astype("float32") / 255.0
    x_test = np.reshape(x_test, (-1, 28, 28, 1))

    # Train teacher as usual
    teacher.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )

    # Train and evaluate teacher on data.
    teacher_history = teacher.fit(x_train, y_train, epochs=2)
    teacher_test = teacher.evaluate(x_test, y_test)

    # Initialize and compile distiller
    distiller = Distiller(student=student, teacher=teacher)
    distiller.compile(
        optimizer=keras.optimizers.Adam(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
        student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        distillation_loss_fn=keras.losses.KLDivergence(),
        alpha=0.1,
        temperature=10,
    )

    # Distill teacher to student
    distiller_history = distiller.fit(x_train, y_train, epochs=2)

    # Evaluate student on test dataset
    distiller_test = distiller.evaluate(x_test, y_test, return_dict=True)

    # Train student as doen usually
    student_scratch.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )

    # Train and evaluate student trained from scratch.
    scratch_history = student_scratch.fit(x_train, y_train, epochs=2)
    scratch_test = student_scratch.evaluate(x_test, y_test)

    out = {"teacher_test_loss": teacher_test[0], "teacher_test_accuracy": teacher_test[1],
           "scratch_test_loss": scratch_test[0], "scratch_test_accuracy": scratch_test[1],
           "distiller_test_count": len(distiller_test)}
    out.update({"teacher_" + k: v[-1] for k, v in teacher_history.history.items()})
    out.update({"distiller_" + k: v[-1] for k, v in distiller_history.history.items()})
    out.update({"distiller_test_" + k: v for k, v in distiller_test.items()})
    out.update({"scratch_" + k: v[-1] for k, v in scratch_history.history.items()})
    return out

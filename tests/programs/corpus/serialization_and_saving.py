# Source: keras-team/keras-io, guides/serialization_and_saving.py, Keras 3 version
#   (guides/keras_core/serialization_and_saving.py; "Save, serialize, and export models",
#   Neel Kovelamudi and fchollet, last modified 2023/06/30),
#   https://keras.io/guides/serialization_and_saving/  License: Apache-2.0.
# Changed: nothing but the wrapping: the code runs in main() (the registered classes and
#   functions too), which returns how far each reloaded model's predictions are from the
#   original's, the training losses, and the counts and names the guide prints.
# Lint: the author's code as written (import order, unused names) is exempt here.
# ruff: noqa: F841, I001, A001, UP032
import numpy as np
import keras
from keras import ops


def main():
    out = {}

    def get_model():
        # Create a simple model.
        inputs = keras.Input(shape=(32,))
        outputs = keras.layers.Dense(1)(inputs)
        model = keras.Model(inputs, outputs)
        model.compile(optimizer=keras.optimizers.Adam(), loss="mean_squared_error")
        return model

    model = get_model()

    # Train the model.
    test_input = np.random.random((128, 32))
    test_target = np.random.random((128, 1))
    history = model.fit(test_input, test_target)
    out["simple_loss"] = history.history["loss"][-1]

    # Calling `save('my_model.keras')` creates a zip archive `my_model.keras`.
    model.save("my_model.keras")

    # It can be used to reconstruct the model identically.
    reconstructed_model = keras.models.load_model("my_model.keras")

    # Let's check:
    np.testing.assert_allclose(
        model.predict(test_input), reconstructed_model.predict(test_input)
    )
    out["simple_reload_max_diff"] = float(np.max(np.abs(
        model.predict(test_input) - reconstructed_model.predict(test_input))))
    out["simple_reload_optimizer_iterations_count"] = float(
        reconstructed_model.optimizer.iterations.numpy())
    out["simple_prediction_mean"] = float(np.mean(reconstructed_model.predict(test_input)))

    # Clear all previously registered custom objects
    keras.saving.get_custom_objects().clear()

    # Upon registration, you can optionally specify a package or a name.
    # If left blank, the package defaults to `Custom` and the name defaults to
    # the class name.
    @keras.saving.register_keras_serializable(package="MyLayers")
    class CustomLayer(keras.layers.Layer):
        def __init__(self, factor):
            super().__init__()
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {"factor": self.factor}

    @keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
    def custom_fn(x):
        return x**2

    # Create the model.
    def get_model():
        inputs = keras.Input(shape=(4,))
        mid = CustomLayer(0.5)(inputs)
        outputs = keras.layers.Dense(1, activation=custom_fn)(mid)
        model = keras.Model(inputs, outputs)
        model.compile(optimizer="rmsprop", loss="mean_squared_error")
        return model

    # Train the model.
    def train_model(model):
        input = np.random.random((4, 4))
        target = np.random.random((4, 1))
        model.fit(input, target)
        return model

    test_input = np.random.random((4, 4))
    test_target = np.random.random((4, 1))

    model = get_model()
    model = train_model(model)
    model.save("custom_model.keras")

    # Now, we can simply load without worrying about our custom objects.
    reconstructed_model = keras.models.load_model("custom_model.keras")

    # Let's check:
    np.testing.assert_allclose(
        model.predict(test_input), reconstructed_model.predict(test_input)
    )
    out["registered_prediction_mean"] = float(np.mean(reconstructed_model.predict(test_input)))
    out["registered_custom_objects_count"] = len(keras.saving.get_custom_objects())

    model = get_model()
    model = train_model(model)

    # Calling `save('my_model.keras')` creates a zip archive `my_model.keras`.
    model.save("custom_model.keras")

    # Upon loading, pass a dict containing the custom objects used in the
    # `custom_objects` argument of `keras.models.load_model()`.
    reconstructed_model = keras.models.load_model(
        "custom_model.keras",
        custom_objects={"CustomLayer": CustomLayer, "custom_fn": custom_fn},
    )

    # Let's check:
    np.testing.assert_allclose(
        model.predict(test_input), reconstructed_model.predict(test_input)
    )
    out["custom_objects_prediction_mean"] = float(
        np.mean(reconstructed_model.predict(test_input)))

    model = get_model()
    model = train_model(model)
    model.save("custom_model.keras")

    # Pass the custom objects dictionary to a custom object scope and place
    # the `keras.models.load_model()` call within the scope.
    custom_objects = {"CustomLayer": CustomLayer, "custom_fn": custom_fn}

    with keras.saving.custom_object_scope(custom_objects):
        reconstructed_model = keras.models.load_model("custom_model.keras")

    # Let's check:
    np.testing.assert_allclose(
        model.predict(test_input), reconstructed_model.predict(test_input)
    )
    out["scope_prediction_mean"] = float(np.mean(reconstructed_model.predict(test_input)))

    new_model = keras.models.clone_model(model)
    out["clone_weights_count"] = len(new_model.weights)

    layer = keras.layers.Dense(3, activation="relu")
    layer_config = layer.get_config()
    print(layer_config)
    out["dense_config_keys_count"] = len(layer_config)

    new_layer = keras.layers.Dense.from_config(layer_config)

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
    config = model.get_config()
    new_model = keras.Sequential.from_config(config)
    out["sequential_from_config_layers_count"] = len(new_model.layers)

    inputs = keras.Input((32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = keras.Model(inputs, outputs)
    config = model.get_config()
    new_model = keras.Model.from_config(config)
    out["functional_from_config_layers_count"] = len(new_model.layers)

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
    json_config = model.to_json()
    new_model = keras.models.model_from_json(json_config)
    out["json_from_config_layers_count"] = len(new_model.layers)

    my_reg = keras.regularizers.L1(0.005)
    config = keras.saving.serialize_keras_object(my_reg)
    print(config)
    out["regularizer_config_keys_count"] = len(config)

    new_reg = keras.saving.deserialize_keras_object(config)
    out["regularizer_l1"] = float(new_reg.l1)

    def create_layer():
        layer = keras.layers.Dense(64, activation="relu", name="dense_2")
        layer.build((None, 784))
        return layer

    layer_1 = create_layer()
    layer_2 = create_layer()

    # Copy weights from layer 1 to layer 2
    layer_2.set_weights(layer_1.get_weights())

    # Create a simple functional model
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    functional_model = keras.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")

    # Define a subclassed model with the same architecture
    class SubclassedModel(keras.Model):
        def __init__(self, output_dim, name=None):
            super().__init__(name=name)
            self.output_dim = output_dim
            self.dense_1 = keras.layers.Dense(64, activation="relu", name="dense_1")
            self.dense_2 = keras.layers.Dense(64, activation="relu", name="dense_2")
            self.dense_3 = keras.layers.Dense(output_dim, name="predictions")

        def call(self, inputs):
            x = self.dense_1(inputs)
            x = self.dense_2(x)
            x = self.dense_3(x)
            return x

        def get_config(self):
            return {"output_dim": self.output_dim, "name": self.name}

    subclassed_model = SubclassedModel(10)
    # Call the subclassed model once to create the weights.
    subclassed_model(np.ones((1, 784)))

    # Copy weights from functional_model to subclassed_model.
    subclassed_model.set_weights(functional_model.get_weights())

    assert len(functional_model.weights) == len(subclassed_model.weights)
    for a, b in zip(functional_model.weights, subclassed_model.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy())
    out["subclassed_output_sum"] = float(np.sum(subclassed_model(np.ones((1, 784)))))

    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    functional_model = keras.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")

    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)

    # Add a dropout layer, which does not contain any weights.
    x = keras.layers.Dropout(0.5)(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    functional_model_with_dropout = keras.Model(
        inputs=inputs, outputs=outputs, name="3_layer_mlp"
    )

    functional_model_with_dropout.set_weights(functional_model.get_weights())

    # Runnable example
    sequential_model = keras.Sequential(
        [
            keras.Input(shape=(784,), name="digits"),
            keras.layers.Dense(64, activation="relu", name="dense_1"),
            keras.layers.Dense(64, activation="relu", name="dense_2"),
            keras.layers.Dense(10, name="predictions"),
        ]
    )
    sequential_model.save_weights("my_model.weights.h5")
    sequential_model.load_weights("my_model.weights.h5")

    class NestedDenseLayer(keras.layers.Layer):
        def __init__(self, units, name=None):
            super().__init__(name=name)
            self.dense_1 = keras.layers.Dense(units, name="dense_1")
            self.dense_2 = keras.layers.Dense(units, name="dense_2")

        def call(self, inputs):
            return self.dense_2(self.dense_1(inputs))

    nested_model = keras.Sequential([keras.Input((784,)), NestedDenseLayer(10, "nested")])
    variable_names = [v.name for v in nested_model.weights]
    print("variables: {}".format(variable_names))

    print("\nChanging trainable status of one of the nested layers...")
    nested_model.get_layer("nested").dense_1.trainable = False

    variable_names_2 = [v.name for v in nested_model.weights]
    print("\nvariables: {}".format(variable_names_2))
    print("variable ordering changed:", variable_names != variable_names_2)
    out["variable_ordering_changed_count"] = int(variable_names != variable_names_2)
    out["variable_name_chars_count"] = sum(len(n) for n in variable_names)

    def create_functional_model():
        inputs = keras.Input(shape=(784,), name="digits")
        x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
        x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
        outputs = keras.layers.Dense(10, name="predictions")(x)
        return keras.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")

    functional_model = create_functional_model()
    functional_model.save_weights("pretrained.weights.h5")

    # In a separate program:
    pretrained_model = create_functional_model()
    pretrained_model.load_weights("pretrained.weights.h5")
    out["pretrained_reload_max_diff"] = float(max(
        np.max(np.abs(a.numpy() - b.numpy()))
        for a, b in zip(functional_model.weights, pretrained_model.weights)))

    # Create a new model by extracting layers from the original model:
    extracted_layers = pretrained_model.layers[:-1]
    extracted_layers.append(keras.layers.Dense(5, name="dense_3"))
    model = keras.Sequential(extracted_layers)
    model.summary()
    out["extracted_params_count"] = model.count_params()

    @keras.saving.register_keras_serializable(package="MyLayers", name="KernelMult")
    class MyDense(keras.layers.Layer):
        def __init__(
            self,
            units,
            *,
            kernel_regularizer=None,
            kernel_initializer=None,
            nested_model=None,
            **kwargs
        ):
            super().__init__(**kwargs)
            self.hidden_units = units
            self.kernel_regularizer = kernel_regularizer
            self.kernel_initializer = kernel_initializer
            self.nested_model = nested_model

        def get_config(self):
            config = super().get_config()
            # Update the config with the custom layer's parameters
            config.update(
                {
                    "units": self.hidden_units,
                    "kernel_regularizer": self.kernel_regularizer,
                    "kernel_initializer": self.kernel_initializer,
                    "nested_model": self.nested_model,
                }
            )
            return config

        def build(self, input_shape):
            input_units = input_shape[-1]
            self.kernel = self.add_weight(
                name="kernel",
                shape=(input_units, self.hidden_units),
                regularizer=self.kernel_regularizer,
                initializer=self.kernel_initializer,
            )

        def call(self, inputs):
            return ops.matmul(inputs, self.kernel)

    layer = MyDense(units=16, kernel_regularizer="l1", kernel_initializer="ones")
    layer3 = MyDense(units=64, nested_model=layer)

    config = keras.layers.serialize(layer3)

    print(config)

    new_layer = keras.layers.deserialize(config)

    print(new_layer)
    out["nested_layer_units"] = new_layer.nested_model["config"]["units"]

    @keras.saving.register_keras_serializable(package="ComplexModels")
    class CustomModel(keras.layers.Layer):
        def __init__(self, first_layer, second_layer=None, **kwargs):
            super().__init__(**kwargs)
            self.first_layer = first_layer
            if second_layer is not None:
                self.second_layer = second_layer
            else:
                self.second_layer = keras.layers.Dense(8)

        def get_config(self):
            config = super().get_config()
            config.update(
                {
                    "first_layer": self.first_layer,
                    "second_layer": self.second_layer,
                }
            )
            return config

        @classmethod
        def from_config(cls, config):
            # Note that you can also use `keras.saving.deserialize_keras_object` here
            config["first_layer"] = keras.layers.deserialize(config["first_layer"])
            config["second_layer"] = keras.layers.deserialize(config["second_layer"])
            return cls(**config)

        def call(self, inputs):
            return self.first_layer(self.second_layer(inputs))

    # Let's make our first layer the custom layer from the previous example (MyDense)
    inputs = keras.Input((32,))
    outputs = CustomModel(first_layer=layer)(inputs)
    model = keras.Model(inputs, outputs)

    config = model.get_config()
    new_model = keras.Model.from_config(config)
    out["complex_model_params_count"] = new_model.count_params()
    out["complex_model_output_sum"] = float(np.sum(model(np.ones((2, 32)))))

    layer = MyDense(
        units=16,
        kernel_regularizer=keras.regularizers.L1L2(l1=1e-5, l2=1e-4),
        kernel_initializer="ones",
    )
    config = keras.layers.serialize(layer)
    print(config)
    out["registered_name_chars_count"] = len(config["registered_name"])
    out["module_is_none_count"] = int(config["module"] is None)
    return out

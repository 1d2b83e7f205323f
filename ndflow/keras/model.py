"""`tf.keras.Model`: a Layer that trains (trainer.py). `Model(inputs, outputs)` builds a
functional model (functional.py); subclasses define `__init__` and `call`."""

from __future__ import annotations

from ndflow.core.api_export import keras_export
from ndflow.keras import keras_tensor, summary_utils
from ndflow.keras.layers.auto_config import default
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.saving import saving_api
from ndflow.keras.trainer import Trainer
from ndflow.saved_model.export_archive import export_saved_model

# Set by functional.py (which subclasses Model): the class `Model(inputs, outputs)` makes.
functional_class = None


def _is_functional_call(args, kwargs) -> bool:
    return (len(args) == 2 or (len(args) == 1 and "outputs" in kwargs)
            or ("inputs" in kwargs and "outputs" in kwargs))


def _inject_functional(cls):
    """Keras' inject_functional_model_class: Model replaced by Functional in `cls`'s bases."""
    if cls is Model:
        return functional_class
    if cls is object or not issubclass(cls, Model):
        return cls
    cls.__bases__ = tuple(_inject_functional(base) for base in cls.__bases__)
    return cls


@keras_export("keras.Model", "keras.models.Model")
class Model(Trainer, Layer):
    """A model: layers grouped into an object that trains (`compile`, `fit`), evaluates,
    predicts and saves.

    Three ways to make one: the functional API, `Model(inputs, outputs)` with the
    KerasTensors of `keras.Input` and the layers called on them; a subclass defining
    layers in `__init__` and the computation in `call`; or `keras.Sequential`.

    Args:
      inputs: (functional API) the model's input KerasTensor(s): one, a list or a dict (a
        tensor computed by layers becomes a new `Input`, the model starting there).
      outputs: (functional API) the output KerasTensor(s) computed from them.
      name: the model's name.
      trainable: whether the weights are trained.
      **kwargs: other Layer arguments (dtype, ...).

    Example:

    >>> inputs = tf.keras.Input((3,))
    >>> outputs = tf.keras.layers.Dense(2)(inputs)
    >>> model = tf.keras.Model(inputs, outputs)
    >>> model(tf.zeros((4, 3))).shape
    TensorShape([4, 2])
    """

    def __new__(cls, *args, **kwargs):
        if cls is Model and _is_functional_call(args, kwargs):
            # a Functional, initialized once by the __init__ call that follows (as Keras)
            return super().__new__(functional_class)
        # without the arguments, as Keras: a subclassed model's automatic config holds its
        # constructor's defaults
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        if _is_functional_call(args, kwargs) and not isinstance(self, functional_class):
            # a subclass called as `Sub(inputs, outputs)` (a custom train_step over a
            # functional graph): as Keras, Functional takes Model's place in its bases
            _inject_functional(type(self))
            functional_class.__init__(self, *args, **kwargs)
            return
        trainable = kwargs.pop("trainable", True)
        name = kwargs.pop("name", None)
        dtype = kwargs.pop("dtype", None)
        if args:   # Keras' (Python's) message: Layer.__init__ takes keywords only
            raise TypeError(f"Layer.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to "
                             f"{type(self).__name__}: {kwargs}")
        Layer.__init__(self, trainable=trainable, name=name, dtype=dtype)

    _records_build_shapes = True

    def build(self, input_shape=None) -> None:
        """A subclassed model builds its sublayers by being called once on a symbolic input
        of `input_shape` (Keras 3)."""
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        self.built = True  # the traced call must not build again
        spec = keras_tensor.KerasTensor(tuple(input_shape), self.compute_dtype)
        keras_tensor.output_spec(self.__call__, (spec,), {})

    build._builds_by_calling = True  # a first real call needs no separate build

    @property
    def layers(self) -> list:
        """The model's direct sublayers (a new list), in the order they were assigned."""
        return list(self._layers)

    def get_layer(self, name=None, index=None):
        """A layer by name or by index in `layers`."""
        if index is not None and name is not None:
            raise ValueError("Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        if index is not None:
            if len(self.layers) <= index:
                raise ValueError(f"Was asked to retrieve layer at index {index} but model "
                                 f"only has {len(self.layers)} layers.")
            return self.layers[index]
        if name is not None:
            for layer in self.layers:
                if layer.name == name:
                    return layer
            raise ValueError(f"No such layer: {name}. Existing layers are: "
                             f"{[layer.name for layer in self.layers]}.")
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints the layers, their output shapes and parameter counts as Keras does."""
        summary_utils.print_summary(self, line_length=line_length, positions=positions,
                                    print_fn=print_fn, expand_nested=expand_nested,
                                    show_trainable=show_trainable)

    @default
    def get_config(self) -> dict:
        """The model's config: `Layer.get_config` (a subclassed model without its own
        get_config records its constructor's arguments)."""
        return Layer.get_config(self)

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """A new model from `get_config`'s dict: a functional config (`layers`,
        `input_layers`) is rebuilt as a functional model, any other is `cls(**config)`."""
        if "layers" in config and "input_layers" in config and functional_class is not None:
            return functional_class.from_config(config, custom_objects=custom_objects)
        return cls(**config)

    # -- saving (ndflow/keras/saving) --------------------------------------------------------
    def to_json(self, **kwargs) -> str:
        """The model's serialized config as a JSON string (`keras.models.model_from_json`
        rebuilds it); `kwargs` go to `json.dumps`."""
        return saving_api.model_to_json(self, **kwargs)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves the model (config, weights, optimizer state) as a `.keras` archive."""
        return saving_api.save_model(self, filepath, overwrite=overwrite, zipped=zipped,
                                     **kwargs)

    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Saves the weights (and the optimizer's state) to a `.weights.h5` file."""
        return saving_api.save_weights(self, filepath, overwrite=overwrite,
                                       max_shard_size=max_shard_size)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        """Loads weights from a `.weights.h5` file or a `.keras` archive."""
        saving_api.load_weights(self, filepath, skip_mismatch=skip_mismatch, **kwargs)

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None,
               **kwargs):
        """Exports the model for inference as a SavedModel (Keras 3's `serve` endpoint and
        `serving_default` signature); TensorFlow and TF Serving load it."""
        if format != "tf_saved_model":
            raise ValueError(f"Unrecognized format={format!r}. ndflow exports "
                             "format='tf_saved_model' only.")
        export_saved_model(self, filepath, verbose=verbose, input_signature=input_signature)

"""`tf.keras.applications.imagenet_utils` and what every application builder shares: the
input-shape rules, the `weights` argument ("imagenet" files fetched into ~/.keras/models with
their hashes, or a path), `input_tensor`, and the ImageNet preprocessing and decoding. The
rules and messages are Keras 3.15's (keras/src/applications)."""

from __future__ import annotations

import inspect
import json
import os
import sys
import textwrap
import warnings

import numpy as np

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.keras import activation_functions, backend_functions, file_downloads, layers
from ndflow.keras.functional import Functional
from ndflow.keras.keras_tensor import KerasTensor
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.input_layer import Input, InputLayer
from ndflow.ops import array_reorder, cast
from ndflow.ops.apply import convert_to_tensor

CLASS_INDEX_PATH = ("https://storage.googleapis.com/download.tensorflow.org/data/"
                    "imagenet_class_index.json")
_CLASS_INDEX: dict = {}
_CAFFE_MEAN = (103.939, 116.779, 123.68)            # BGR
_TORCH_MEAN, _TORCH_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


# -- preprocessing and decoding --------------------------------------------------------------
@keras_export("keras.applications.imagenet_utils.preprocess_input")
def preprocess_input(x, data_format=None, mode="caffe"):
    """ImageNet preprocessing of a batch of images in [0, 255]: "caffe" (RGB to BGR, minus
    the ImageNet channel means), "tf" (scaled to [-1, 1]) or "torch" ([0, 1], then normalized
    by the ImageNet means and deviations). NumPy input is modified in place when it is float,
    as Keras does; tensors give new tensors.

    Args:
      x: images as a float NumPy array or tensor, pixels in [0, 255], 3-D or 4-D.
      data_format: "channels_last" or "channels_first" (default:
        `keras.config.image_data_format()`).
      mode: "caffe", "tf" or "torch" (above).

    Returns:
      The preprocessed images, in the shape of `x`.

    Raises:
      ValueError: an unknown `mode` or `data_format`.
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError("Expected mode to be one of `caffe`, `tf` or `torch`. "
                         f"Received: mode={mode}")
    if data_format is None:
        data_format = backend_functions.image_data_format()
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or "
                         f"`channels_last`. Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        return _preprocess_numpy(x, data_format, mode)
    if isinstance(x, KerasTensor):   # in a functional model: a layer doing the same
        return ImageNetPreprocessing(mode=mode, data_format=data_format)(x)
    return _preprocess_tensor(convert_to_tensor(x), data_format, mode)


class ImageNetPreprocessing(Layer):
    """`preprocess_input` applied to a functional model's KerasTensor (Keras 3 records its
    arithmetic as ops in the graph; ndflow records this one layer, which saves and loads
    with ndflow's models)."""

    def __init__(self, mode="caffe", data_format="channels_last", **kwargs):
        super().__init__(**kwargs)
        self.mode, self.data_format = mode, data_format

    def call(self, inputs):
        return _preprocess_tensor(inputs, self.data_format, self.mode)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "data_format": self.data_format}


def _mean_std(mode):
    if mode == "torch":
        return _TORCH_MEAN, _TORCH_STD
    return _CAFFE_MEAN, None


def _channel_shape(ndim: int, data_format: str) -> tuple:
    if data_format == "channels_first":
        return (3, 1, 1) if ndim == 3 else (1, 3) + (1,) * (ndim - 2)
    return (1,) * (ndim - 1) + (3,)


def _preprocess_numpy(x, data_format, mode):
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype(backend_functions.floatx(), copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
    else:                                       # caffe: RGB -> BGR
        channel = (0 if x.ndim == 3 else 1) if data_format == "channels_first" else -1
        x = np.flip(x, axis=channel)
    mean, std = _mean_std(mode)
    shape = _channel_shape(x.ndim, data_format)
    x -= np.asarray(mean, x.dtype).reshape(shape)
    if std is not None:
        x /= np.asarray(std, x.dtype).reshape(shape)
    return x


def _preprocess_tensor(x, data_format, mode):
    if not dtypes.as_dtype(x.dtype).is_floating:
        x = cast.cast(x, backend_functions.floatx())
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
    else:
        channel = (0 if len(x.shape) == 3 else 1) if data_format == "channels_first" else -1
        x = array_reorder.reverse(x, [channel])
    mean, std = _mean_std(mode)
    shape = _channel_shape(len(x.shape), data_format)
    x = x - np.asarray(mean, np.float32).reshape(shape)
    if std is not None:
        x = x / np.asarray(std, np.float32).reshape(shape)
    return x


@keras_export("keras.applications.imagenet_utils.decode_predictions")
def decode_predictions(preds, top=5):
    """The `top` ImageNet classes of each prediction, with their names and scores.

    The class index (imagenet_class_index.json) is downloaded once into
    ~/.keras/models.

    Args:
      preds: a (samples, 1000) tensor or array of ImageNet class scores, e.g. a
        classifier's output.
      top: how many classes to return per sample.

    Returns:
      A list (one per sample) of lists of `(class_id, description, score)` tuples, best
      first, e.g. `("n02123045", "tabby", 0.72)`.

    Raises:
      ValueError: `preds` is not of shape (samples, 1000).
    """
    preds = np.asarray(preds.numpy() if isinstance(preds, Tensor) else preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array "
                         f"of shape (samples, 1000)). Received array with shape: {preds.shape}")
    if not _CLASS_INDEX:
        path = file_downloads.get_file("imagenet_class_index.json", CLASS_INDEX_PATH,
                                       cache_subdir="models",
                                       file_hash="c2c37ea517e94d9795004a39431a14cb")
        with open(path) as f:
            _CLASS_INDEX.update(json.load(f))
    results = []
    for pred in preds:
        best = pred.argsort()[-top:][::-1]
        rows = [tuple(_CLASS_INDEX[str(i)]) + (pred[i],) for i in best]
        rows.sort(key=lambda r: r[2], reverse=True)
        results.append(rows)
    return results


# -- what the builders share -----------------------------------------------------------------
def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten,
                       weights=None):
    """The model's input shape from the user's (Keras' checks and messages)."""
    first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was "
                          f"passed an input_shape with {channels} input channels.",
                          stacklevel=3)
        default = (channels, default_size, default_size) if first else \
            (default_size, default_size, channels)
    else:
        default = (3, default_size, default_size) if first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, "
                             f"`input_shape` should be {default}.  Received: "
                             f"input_shape={input_shape}")
        return default
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels = input_shape[0] if first else input_shape[-1]
        rows, cols = (input_shape[1], input_shape[2]) if first else input_shape[:2]
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape="
                             f"{input_shape}`")
        if (rows is not None and rows < min_size) or (cols is not None and cols < min_size):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    else:
        input_shape = default if require_flatten else \
            ((3, None, None) if first else (None, None, 3))
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return tuple(input_shape)


def correct_pad(inputs, kernel_size):
    """The ZeroPadding2D of a strided 'valid' convolution that matches TF's SAME."""
    first = backend_functions.image_data_format() == "channels_first"
    size = tuple(inputs.shape)[2:4] if first else tuple(inputs.shape)[1:3]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def validate_activation(classifier_activation, weights) -> None:
    if weights is None:
        return
    fn = activation_functions.get(classifier_activation)
    if fn not in {activation_functions.get("softmax"), activation_functions.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the "
                         "`classifier_activation` argument when using pretrained weights, "
                         f"with `include_top=True`; Received: {classifier_activation}")


def check_weights(weights, include_top: bool, classes: int, quote: str = "'") -> None:
    if not (weights in {"imagenet", None} or os.path.exists(str(weights))):
        raise ValueError("The `weights` argument should be either `None` (random "
                         f"initialization), {quote}imagenet{quote} (pre-training on ImageNet), "
                         "or the path to the weights file to be loaded.  Received: "
                         f"weights={weights}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f"If using `weights={quote}imagenet{quote}` with `include_top=True`, "
                         f"`classes` should be 1000.  Received classes={classes}")


def check_weights_source(weights) -> None:
    """`weights` is None, "imagenet" or an existing file (Keras' words without the value, as
    ConvNeXt, InceptionResNetV2 and NASNet say them)."""
    if not (weights in {"imagenet", None} or os.path.exists(str(weights))):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), `imagenet` (pre-training on ImageNet), or the path "
                         "to the weights file to be loaded.")


def require_channels_last(model: str) -> None:
    """Raises where the image data format is "channels_first" (`model`: ConvNeXt, NASNet)."""
    if backend_functions.image_data_format() == "channels_first":
        raise ValueError(f"{model} does not support the `channels_first` image data format. "
                         "Switch to `channels_last` by editing your local config file at "
                         "~/.keras/keras.json")


def weights_rows(rows, cols, sizes) -> int:
    """The input size whose ImageNet weights a MobileNet loads: `rows`, or 224 (with Keras'
    warning) where the input is not square or not one of `sizes`."""
    if rows == cols and rows in sizes:
        return rows
    warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in "
                  f"{list(sizes)}. Weights for input shape (224, 224) will be loaded as the "
                  "default.", stacklevel=3)
    return 224


def check_mobilenet_weights(weights, include_top: bool, classes: int,
                            v2_words: bool = False) -> None:
    """`check_weights` in the words of Keras' MobileNet and MobileNetV3 (`v2_words`:
    MobileNetV2's, which quote the received values)."""
    q, gap = ("`", " ") if v2_words else ("", "  ")
    if not (weights in {"imagenet", None} or os.path.exists(str(weights))):
        raise ValueError("The `weights` argument should be either `None` (random "
                         "initialization), `imagenet` (pre-training on ImageNet), or the path "
                         f"to the weights file to be loaded.  Received {q}weights={weights}{q}")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights="imagenet"` with `include_top` as true, `classes` '
                         f"should be 1000.{gap}Received {q}classes={classes}{q}")


def image_input(input_tensor, input_shape):
    """The model's input KerasTensor: a new Input, or the caller's `input_tensor`."""
    if input_tensor is None:
        return Input(shape=input_shape)
    if not isinstance(input_tensor, KerasTensor):
        raise ValueError(f"input_tensor is not a Keras tensor; Received `input_tensor="
                         f"{input_tensor}`")
    return input_tensor


def source_inputs(tensor) -> list:
    """The Input tensors `tensor` is computed from (Keras' get_source_inputs)."""
    found, seen, stack = [], set(), [tensor]
    while stack:
        t = stack.pop()
        layer, index, _ = t._keras_history
        if isinstance(layer, InputLayer):
            if id(t) not in seen:
                seen.add(id(t))
                found.append(t)
            continue
        stack.extend(reversed(list(layer._inbound_nodes[index].input_tensors)))
    return found if len(found) != 1 else found[0]


def model_inputs(input_tensor, img_input):
    return source_inputs(input_tensor) if input_tensor is not None else img_input


def load_weights(model, weights, file_name: str, origin: str, file_hash: str | None) -> None:
    """"imagenet": the file Keras publishes (from the cache, else downloaded and verified);
    a path: that file."""
    if weights == "imagenet":
        path = file_downloads.get_file(file_name, origin, cache_subdir="models",
                                       file_hash=file_hash)
        model.load_weights(path)
    elif weights is not None:
        model.load_weights(weights)


def top_pooling(x, pooling, include_top: bool, names=(None, None)):
    """The feature model's optional global pooling ("avg"/"max")."""
    if include_top or pooling not in ("avg", "max"):
        return x
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names[0])(x)
    return layers.GlobalMaxPooling2D(name=names[1])(x)


def model_input(input_tensor, input_shape, default_size: int, min_size: int, include_top: bool,
                weights, data_format: str | None = None):
    """(the input shape, the model's input KerasTensor) from the builder's arguments, by
    `obtain_input_shape` in `data_format` (default: the configured image data format)."""
    data_format = data_format or backend_functions.image_data_format()
    input_shape = obtain_input_shape(input_shape, default_size, min_size, data_format,
                                     include_top, weights)
    return input_shape, image_input(input_tensor, input_shape)


def classifier(x, include_top: bool, pooling, classes: int, classifier_activation, weights,
               pool_name: str | None = "avg_pool", pooling_names=(None, None)):
    """The model's top: with `include_top`, global average pooling (`pool_name`) and the
    Dense "predictions" layer; without, the optional global pooling named `pooling_names`."""
    if not include_top:
        return top_pooling(x, pooling, include_top, names=pooling_names)
    x = layers.GlobalAveragePooling2D(name=pool_name)(x)
    validate_activation(classifier_activation, weights)
    return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)


def kernels_model(input_tensor, img_input, outputs, name: str, weights, include_top: bool,
                  stem: str, base_url: str, hashes: tuple) -> Functional:
    """`imagenet_model` with the weight file Keras names
    `<stem>_weights_tf_dim_ordering_tf_kernels[_notop].h5` (under `base_url`; `hashes`: the
    files' with and without the classifier)."""
    file_name = f"{stem}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return imagenet_model(input_tensor, img_input, outputs, name, weights, file_name,
                          base_url + file_name, hashes[0 if include_top else 1])


def imagenet_model(input_tensor, img_input, outputs, name: str, weights, file_name: str,
                   origin: str, file_hash: str | None) -> Functional:
    """The functional model from the builder's input to `outputs`, with `weights` loaded."""
    model = Functional(model_inputs(input_tensor, img_input), outputs, name=name)
    load_weights(model, weights, file_name, origin, file_hash)
    return model


def standard_builder(build, variant: str, public: str, doc: str,
                     default_name: str | None = None):
    """The public builder `public` of one model of a family, with the signature Keras gives
    most of them, calling `build(variant, include_top, weights, input_tensor, input_shape,
    pooling, classes, classifier_activation, name)`; `name` defaults to `default_name` (else
    `variant`). The family's module declares it."""
    default_name = variant if default_name is None else default_name

    def builder(include_top=True, weights="imagenet", input_tensor=None, input_shape=None,
                pooling=None, classes=1000, classifier_activation="softmax",
                name=default_name):
        return build(variant, include_top, weights, input_tensor, input_shape, pooling,
                     classes, classifier_activation, name)
    builder.__name__ = builder.__qualname__ = public
    builder.__doc__ = doc
    builder.__module__ = build.__module__
    return with_arguments(builder)


# What each argument of the applications' builders and preprocessing functions means
# (`with_arguments` writes a function's Args section from its signature).
ARG_DOCS = {
    "include_top": "whether to end with the global pooling and the `classes`-way dense "
                   "classifier (False: the convolutional features only)",
    "include_preprocessing": "whether the model starts with its own rescaling layers (it then "
                             "takes pixels in [0, 255])",
    "weights": 'None (random initialization), "imagenet" (the pre-trained weights, '
               "downloaded once into ~/.keras/models), or the path of a weights file",
    "input_tensor": "an optional Keras tensor (the output of `keras.Input`) to build on",
    "input_shape": "the image shape without the batch, e.g. (224, 224, 3); only with "
                   "`include_top=False` may it differ from the model's default size",
    "pooling": 'with `include_top=False`: None (4-D feature maps), "avg" or "max" (global '
               "pooling to a 2-D output)",
    "classes": 'the number of classes of the classifier (1000 with "imagenet" weights and '
               "the top)",
    "classifier_activation": 'the activation of the top layer ("softmax"; None for logits)',
    "alpha": "the width multiplier: below 1 thins every layer's filters, above 1 widens "
             "them (the published weights exist for a few values)",
    "depth_multiplier": "the channel multiplier of the depthwise convolutions (1 with the "
                        "weights)",
    "dropout": "the dropout rate before the classifier",
    "dropout_rate": "the dropout rate before the classifier",
    "minimalistic": "whether to use the minimalistic blocks (no squeeze-and-excite, "
                    "hard-swish or 5x5 kernels)",
    "name": "the model's name",
    "x": "images as a float NumPy array or tensor, pixels in [0, 255], 3-D (one image) or "
         "4-D (a batch)",
    "data_format": '"channels_last" or "channels_first" (default: '
                   "`keras.config.image_data_format()`)",
}


def with_arguments(fn, returns: str = "A `keras.Model`."):
    """`fn` with an Args section (from its signature and ARG_DOCS) and `returns` appended to
    its docstring."""
    lines = ["", "    Args:"]
    for param in inspect.signature(fn).parameters:
        lines.append(textwrap.fill(f"{param}: {ARG_DOCS[param]}.", 92,
                                   initial_indent=" " * 6, subsequent_indent=" " * 8))
    lines += ["", "    Returns:", f"      {returns}", ""]
    fn.__doc__ = (fn.__doc__ or "").rstrip() + "\n" + "\n".join(lines)
    return fn


_MODE_DOCS = {"caffe": 'RGB to BGR, minus the ImageNet channel means ("caffe" mode).',
              "tf": 'Scales pixels from [0, 255] to [-1, 1] ("tf" mode).',
              "torch": 'Pixels to [0, 1], normalized by the ImageNet means and deviations '
                       '("torch" mode).'}


def _of_caller(fn, name: str, doc: str | None):
    """`fn` named `name`, documented by `doc`, as a function of the first module up the stack
    other than this one (the family's)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    frame = sys._getframe(1)
    while frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    fn.__module__ = frame.f_globals["__name__"]
    return fn


def family_preprocess_input(mode: str | None, doc: str | None = None,
                            name: str = "preprocess_input"):
    """A family's `preprocess_input(x, data_format=None)`: `preprocess_input` in `mode`, or
    the identity (`mode` None, for models that preprocess inside). The family's module
    declares it."""
    def preprocess(x, data_format=None):
        if mode is None:
            return x
        return preprocess_input(x, data_format=data_format, mode=mode)
    return with_arguments(
        _of_caller(preprocess, name, doc if doc is not None else _MODE_DOCS[mode]),
        "The preprocessed images (float32), in the shape of `x`.")


def family_decode_predictions(name: str = "decode_predictions"):
    """A family's `decode_predictions(preds, top=5)` (this module's). The family's module
    declares it."""
    def decode(preds, top=5):
        return decode_predictions(preds, top=top)
    return _of_caller(decode, name, decode_predictions.__doc__)


def family_functions(mode: str | None, namespaces, doc: str | None = None, prefix: str = ""):
    """A family's `family_preprocess_input(mode, doc)` and `family_decode_predictions()`,
    declared as `keras.applications.<namespace>.preprocess_input` and `.decode_predictions`
    for each of `namespaces`; the family's module binds them as `<prefix>preprocess_input`
    and `<prefix>decode_predictions`."""
    preprocess = keras_export(*[f"keras.applications.{ns}.preprocess_input"
                                for ns in namespaces])(
        family_preprocess_input(mode, doc, prefix + "preprocess_input"))
    decode = keras_export(*[f"keras.applications.{ns}.decode_predictions"
                            for ns in namespaces])(
        family_decode_predictions(prefix + "decode_predictions"))
    return preprocess, decode

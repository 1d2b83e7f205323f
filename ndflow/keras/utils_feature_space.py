"""`keras.utils.FeatureSpace`: Keras 3's one-stop preprocessing of structured data. Each
feature (a column of a dict) is declared by type: plain, normalized, rescaled or discretized
floats, integer or string categories (lookups) or hashes; pairs of features may be crossed
(HashedCrossing). `adapt` fits the preprocessors on a dataset; calling the space on a dict
(batched or one row, eagerly or in a `tf.data` map) gives the features one-hot encoded and
concatenated (or a dict of them); `get_inputs`/`get_encoded_features` give the same as Keras
tensors for a functional model. Configs, errors and the `.keras` layout are Keras'."""

from __future__ import annotations

from ndflow.core import dtypes
from ndflow.core.api_export import keras_export
from ndflow.core.tensor import Tensor
from ndflow.data.dataset import DatasetV2
from ndflow.keras.layers.base_layer import Layer
from ndflow.keras.layers.category_encoding import CategoryEncoding
from ndflow.keras.layers.discretization import Discretization
from ndflow.keras.layers.hashing_layers import HashedCrossing, Hashing
from ndflow.keras.layers.image_preprocessing import Rescaling
from ndflow.keras.layers.index_lookup import IntegerLookup, StringLookup
from ndflow.keras.layers.input_layer import Input
from ndflow.keras.layers.layer_names import unique_name
from ndflow.keras.layers.layer_serialization import deserialize, serialize
from ndflow.keras.layers.normalization_preprocessing import Normalization
from ndflow.keras.layers.text_vectorization import TextVectorization
from ndflow.keras.saving import saving_api
from ndflow.ops.apply import convert_to_tensor
from ndflow.ops.array_core import expand_dims, reshape, squeeze
from ndflow.ops.array_slicing import concat

_MODULE = "keras.src.layers.preprocessing.feature_space"


def _serialized(obj) -> dict:
    """A Feature or Cross as Keras writes it (registered under its class name)."""
    name = type(obj).__name__
    return {"module": _MODULE, "class_name": name, "config": obj.get_config(),
            "registered_name": name}


def _from_serialized(config: dict, cls):
    if config.get("class_name") != cls.__name__:
        raise ValueError(f"Could not interpret serialized {cls.__name__}: {config}")
    return cls.from_config(config["config"])


class Cross:
    """Features hashed together (`FeatureSpace.cross`)."""

    def __init__(self, feature_names, crossing_dim, output_mode="one_hot"):
        if output_mode not in {"int", "one_hot"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{{'int', 'one_hot'}}. Received: output_mode={output_mode}")
        self.feature_names = tuple(feature_names)
        self.crossing_dim = crossing_dim
        self.output_mode = output_mode

    @property
    def name(self) -> str:
        return "_X_".join(self.feature_names)

    def get_config(self) -> dict:
        return {"feature_names": self.feature_names, "crossing_dim": self.crossing_dim,
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Feature:
    """A feature's input dtype, preprocessing layer and encoding (`FeatureSpace.feature`)."""

    def __init__(self, dtype, preprocessor, output_mode):
        if output_mode not in {"int", "one_hot", "float"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{{'int', 'one_hot', 'float'}}. Received: output_mode="
                             f"{output_mode}")
        self.dtype = dtype
        self.preprocessor = deserialize(preprocessor) if isinstance(preprocessor, dict) \
            else preprocessor
        self.output_mode = output_mode

    def get_config(self) -> dict:
        return {"dtype": self.dtype, "preprocessor": serialize(self.preprocessor),
                "output_mode": self.output_mode}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class TFDIdentity(Layer):
    """A "float" feature's preprocessor: the values as they are."""

    _keras_module = _MODULE
    _keras_registered_name = "TFDIdentity"

    def call(self, x):
        return x


class TFDConcat(Layer):
    """Joins the encoded features along `axis`."""

    _keras_module = _MODULE
    _keras_registered_name = "TFDConcat"

    def __init__(self, axis, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, xs):
        return concat(list(xs), axis=self.axis)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


def _cardinality(preprocessor):
    """The size of a categorical preprocessor's output space, None when unknown."""
    if isinstance(preprocessor, (IntegerLookup, StringLookup)):
        return preprocessor.vocabulary_size()
    if isinstance(preprocessor, CategoryEncoding):
        return preprocessor.num_tokens
    if isinstance(preprocessor, (Discretization, HashedCrossing, Hashing)):
        return preprocessor.num_bins
    return None


def _categorical(lookup, dtype, max_tokens, num_oov_indices, output_mode, name) -> Feature:
    return Feature(dtype, lookup(name=f"{name}_preprocessor", max_tokens=max_tokens,
                                 num_oov_indices=num_oov_indices), output_mode)


def _dtype_name(x) -> str:
    return dtypes.as_dtype(x.dtype).name


@keras_export("keras.utils.FeatureSpace")
class FeatureSpace(Layer):
    """Preprocesses and encodes a dict of structured (tabular) features into one vector per
    sample: each feature is declared with a class method (`float_normalized`,
    `string_categorical`, `integer_hashed`, ...), `adapt(dataset)` learns the statistics
    and vocabularies, and calling the object on a dict of feature values encodes them.

    Args:
      features: a dict of feature name to a declaration (or a name such as
        "float_normalized").
      output_mode: "concat" (one concatenated vector, the default) or "dict" (one
        encoded tensor per feature).
      crosses: optional list of feature crosses (`FeatureSpace.cross(...)` or tuples of
        names).
      crossing_dim: the default hashing space of crosses.
      hashing_dim: the default hashing space of hashed features.
      num_discretization_bins: the default bin count of discretized floats.
      name: the layer's name.

    Raises:
      ValueError: no features.

    Example:

    >>> space = tf.keras.utils.FeatureSpace(
    ...     {"age": "float_normalized", "city": "string_categorical"}, output_mode="concat")
    >>> data = tf.data.Dataset.from_tensor_slices(
    ...     {"age": [20.0, 40.0], "city": ["paris", "rome"]}).batch(2)
    >>> space.adapt(data)
    >>> space({"age": tf.constant([30.0]), "city": tf.constant(["rome"])}).shape
    TensorShape([1, 4])
    """

    _keras_module = "keras.utils"

    # -- feature declarations ----------------------------------------------------------------
    @classmethod
    def cross(cls, feature_names, crossing_dim, output_mode="one_hot"):
        return Cross(feature_names, crossing_dim, output_mode=output_mode)

    @classmethod
    def feature(cls, dtype, preprocessor, output_mode):
        return Feature(dtype, preprocessor, output_mode)

    @classmethod
    def float(cls, name=None):
        name = name or unique_name("float")
        return Feature("float32", TFDIdentity(dtype="float32", name=f"{name}_preprocessor"),
                       "float")

    @classmethod
    def float_rescaled(cls, scale=1.0, offset=0.0, name=None):
        name = name or unique_name("float_rescaled")
        return Feature("float32", Rescaling(scale=scale, offset=offset,
                                            name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_normalized(cls, name=None):
        name = name or unique_name("float_normalized")
        return Feature("float32", Normalization(axis=-1, name=f"{name}_preprocessor"), "float")

    @classmethod
    def float_discretized(cls, num_bins, bin_boundaries=None, output_mode="one_hot",
                          name=None):
        name = name or unique_name("float_discretized")
        return Feature("float32", Discretization(num_bins=num_bins, bin_boundaries=bin_boundaries,
                                                 name=f"{name}_preprocessor"), output_mode)

    @classmethod
    def integer_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot",
                            name=None):
        return _categorical(IntegerLookup, "int32", max_tokens, num_oov_indices, output_mode,
                            name or unique_name("integer_categorical"))

    @classmethod
    def string_categorical(cls, max_tokens=None, num_oov_indices=1, output_mode="one_hot",
                           name=None):
        return _categorical(StringLookup, "string", max_tokens, num_oov_indices, output_mode,
                            name or unique_name("string_categorical"))

    @classmethod
    def string_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or unique_name("string_hashed")
        return Feature("string", Hashing(name=f"{name}_preprocessor", num_bins=num_bins),
                       output_mode)

    @classmethod
    def integer_hashed(cls, num_bins, output_mode="one_hot", name=None):
        name = name or unique_name("integer_hashed")
        return Feature("int32", Hashing(name=f"{name}_preprocessor", num_bins=num_bins),
                       output_mode)

    # -- construction --------------------------------------------------------------------------
    def __init__(self, features, output_mode="concat", crosses=None, crossing_dim=32,
                 hashing_dim=32, num_discretization_bins=32, name=None):
        super().__init__(name=name)
        if not features:
            raise ValueError("The `features` argument cannot be None or empty.")
        self.crossing_dim = crossing_dim
        self.hashing_dim = hashing_dim
        self.num_discretization_bins = num_discretization_bins
        self.features = {key: self._standardize_feature(key, value)
                         for key, value in features.items()}
        self.crosses = [self._standardize_cross(cross, set(features)) for cross in crosses or ()]
        self.crosses_by_name = {cross.name: cross for cross in self.crosses}
        if output_mode not in {"dict", "concat"}:
            raise ValueError("Invalid value for argument `output_mode`. Expected one of "
                             f"{{'dict', 'concat'}}. Received: output_mode={output_mode}")
        self.output_mode = output_mode
        self.inputs = {key: Input(shape=(1,), dtype=feature.dtype, name=key)
                       for key, feature in self.features.items()}
        self.preprocessors = {key: feature.preprocessor for key, feature in self.features.items()}
        self.encoded_features = None
        self.crossers = {cross.name: HashedCrossing(cross.crossing_dim, name=cross.name)
                         for cross in self.crosses}
        self.one_hot_encoders = {}
        self.concat = None
        self._is_adapted = False
        self._merge_order = None        # (feature names sorted, cross names sorted)
        self._sublayers_built = False

    def _standardize_feature(self, name, feature):
        if isinstance(feature, Feature):
            return feature
        if isinstance(feature, dict):
            return _from_serialized(feature, Feature)
        makers = {
            "float": lambda: self.float(name=name),
            "float_normalized": lambda: self.float_normalized(name=name),
            "float_rescaled": lambda: self.float_rescaled(name=name),
            "float_discretized": lambda: self.float_discretized(
                name=name, num_bins=self.num_discretization_bins),
            "integer_categorical": lambda: self.integer_categorical(name=name),
            "string_categorical": lambda: self.string_categorical(name=name),
            "integer_hashed": lambda: self.integer_hashed(self.hashing_dim, name=name),
            "string_hashed": lambda: self.string_hashed(self.hashing_dim, name=name),
        }
        if not isinstance(feature, str) or feature not in makers:
            raise ValueError(f"Invalid feature type: {feature}")
        return makers[feature]()

    def _standardize_cross(self, cross, known: set) -> Cross:
        if isinstance(cross, dict):
            cross = _from_serialized(cross, Cross)
        if isinstance(cross, Cross):
            return cross
        if not self.crossing_dim:
            raise ValueError("When specifying `crosses`, the argument `crossing_dim` "
                             "(dimensionality of the crossing space) should be specified as "
                             "well.")
        if any(key not in known for key in cross):
            raise ValueError("All features referenced in the `crosses` argument should be "
                             f"present in the `features` dict. Received unknown features: "
                             f"{cross}")
        return Cross(cross, crossing_dim=self.crossing_dim)

    # -- adapting ------------------------------------------------------------------------------
    def _adaptable(self) -> list:
        """The features whose preprocessor learns from data (not one given its statistics or
        vocabulary)."""
        out = []
        for key, preprocessor in self.preprocessors.items():
            if isinstance(preprocessor, Normalization) and preprocessor.input_mean is not None:
                continue
            if isinstance(preprocessor, TextVectorization) and \
                    preprocessor._has_input_vocabulary:
                continue
            if hasattr(preprocessor, "adapt"):
                out.append(key)
        return out

    def adapt(self, dataset):
        if not isinstance(dataset, DatasetV2):
            if not isinstance(dataset, dict):
                raise ValueError("`adapt()` can only be called on a tf.data.Dataset or a dict "
                                 f"of arrays/lists. Received instead: {dataset} (of type "
                                 f"{type(dataset)})")
            dataset = DatasetV2.from_tensor_slices(dataset)
        for key in self._adaptable():
            column = dataset.map(lambda x, key=key: x[key])
            first = next(iter(column))
            if len(first.shape) == 0:            # unbatched scalars
                column = column.batch(32)
            if len(first.shape) in (0, 1):       # a trailing axis to reduce over
                column = column.map(lambda x: expand_dims(x, -1))
            self.preprocessors[key].adapt(column)
        self._is_adapted = True
        self.get_encoded_features()
        self.built = True
        self._sublayers_built = True

    def _check_if_adapted(self) -> None:
        if not self._is_adapted:
            if self._adaptable():
                raise ValueError("You need to call `.adapt(dataset)` on the FeatureSpace "
                                 "before you can start using it.")
            self._is_adapted = True

    def _check_if_built(self) -> None:
        if not self._sublayers_built:
            self._check_if_adapted()
            self.get_encoded_features()
            self._sublayers_built = True

    def get_inputs(self) -> dict:
        self._check_if_built()
        return self.inputs

    def get_encoded_features(self):
        self._check_if_adapted()
        if self.encoded_features is None:
            preprocessed = self._preprocess_features(self.inputs)
            self.encoded_features = self._merge_features(
                preprocessed, self._cross_features(preprocessed))
        return self.encoded_features

    # -- the pipeline --------------------------------------------------------------------------
    def _preprocess_features(self, features: dict) -> dict:
        return {key: self.preprocessors[key](features[key]) for key in features}

    def _cross_features(self, features: dict) -> dict:
        return {cross.name: self.crossers[cross.name](
            [features[key] for key in cross.feature_names]) for cross in self.crosses}

    def _merge_features(self, preprocessed: dict, crossed: dict):
        if self._merge_order is None:
            self._merge_order = (sorted(preprocessed), sorted(crossed))
        names, crosses = self._merge_order
        items = [(key, preprocessed[key]) for key in names] + \
                [(key, crossed[key]) for key in crosses]
        if not self._sublayers_built:
            self._build_encoders(items)
        encoded = {}
        for key, value in items:
            encoder = self.one_hot_encoders.get(key)
            encoded[key] = encoder(value) if encoder else value
        if self.output_mode == "dict":
            return encoded
        return self.concat(list(encoded.values()))

    def _build_encoders(self, items) -> None:
        """The one-hot encoders and the concatenation, made once the preprocessors' output
        spaces are known (after adapting), with Keras' checks."""
        for key, value in items:
            spec = self.features.get(key) or self.crosses_by_name[key]
            if spec.output_mode == "one_hot":
                if not _dtype_name(value).startswith("int"):
                    raise ValueError(f"Feature '{key}' has `output_mode='one_hot'`. Thus its "
                                     "preprocessor should return an integer dtype. Instead it "
                                     f"returns a {_dtype_name(value)} dtype.")
                cardinality = _cardinality(self.preprocessors.get(key) or self.crossers[key])
                if cardinality is None:
                    raise ValueError(
                        f"Feature '{key}' has `output_mode='one_hot'`. However it isn't a "
                        "standard feature and the dimensionality of its output space is not "
                        "known, thus it cannot be one-hot encoded. Try using "
                        "`output_mode='int'`.")
                self.one_hot_encoders[key] = CategoryEncoding(num_tokens=cardinality,
                                                              output_mode="multi_hot")
                dtype = "float32"
            else:
                dtype = _dtype_name(value)
            if self.output_mode == "concat" and (dtype.startswith("int") or dtype == "string"):
                raise ValueError(f"Cannot concatenate features because feature '{key}' has not "
                                 f"been encoded (it has dtype {dtype}). Consider using "
                                 "`output_mode='dict'`.")
        if self.output_mode == "concat":
            self.concat = TFDConcat(axis=-1)

    def __call__(self, data):
        self._check_if_built()
        if not isinstance(data, dict):
            raise ValueError(f"A FeatureSpace can only be called with a dict. Received: "
                             f"data={data} (of type {type(data)}")
        data = {key: value if isinstance(value, Tensor) or hasattr(value, "_type_spec")
                else convert_to_tensor(value) for key, value in data.items()}
        one_row = False
        for key, x in data.items():
            if len(x.shape) == 0:
                data[key] = reshape(x, (1, 1))
                one_row = True
            elif len(x.shape) == 1:
                data[key] = expand_dims(x, -1)
        preprocessed = self._preprocess_features(data)
        merged = self._merge_features(preprocessed, self._cross_features(preprocessed))
        if one_row:
            if self.output_mode == "concat":
                if merged.shape[0] != 1:
                    raise ValueError("Expected rebatched data to have batch size 1. "
                                     f"Received: shape={merged.shape}")
                return squeeze(merged, axis=0)
            merged = {key: squeeze(x, axis=0) if len(x.shape) == 2 and x.shape[0] == 1 else x
                      for key, x in merged.items()}
        return merged

    # -- saving --------------------------------------------------------------------------------
    def get_config(self) -> dict:
        return {"features": {key: _serialized(f) for key, f in self.features.items()},
                "output_mode": self.output_mode,
                "crosses": [_serialized(c) for c in self.crosses],
                "crossing_dim": self.crossing_dim, "hashing_dim": self.hashing_dim,
                "num_discretization_bins": self.num_discretization_bins}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self) -> dict:
        return {key: f.preprocessor.get_build_config() for key, f in self.features.items()}

    def build_from_config(self, config) -> None:
        for key, build in (config or {}).items():
            preprocessor = self.features[key].preprocessor
            if not preprocessor.built and build:
                preprocessor.build_from_config(build)
        self._is_adapted = True

    def save(self, filepath) -> None:
        """Writes the space to a `.keras` file (`keras.models.load_model` reads it back)."""
        saving_api.save_model(self, filepath)

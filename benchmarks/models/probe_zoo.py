"""The model probes of benchmarks/models/probes.py: image models (this file, which also holds
the registry) and sequence, text and tabular models (probe_zoo_sequences.py). Each builder
returns (batch, steps, x, y, model) for `fit`, as a user would write the model."""

from __future__ import annotations

import numpy as np

PROBES: dict = {}  # name -> builder(name, tf, keras, L, rng) -> (batch, steps, x, y, model)


def probe(*names):
    """Registers a builder under `names` (one builder may serve several, told by `name`)."""

    def register(fn):
        for n in names:
            PROBES[n] = fn
        return fn

    return register


class Multi(list):
    """Several model inputs that slice together (a two-input model's x)."""

    def __getitem__(self, k):
        return [a[k] for a in self] if isinstance(k, slice) else list.__getitem__(self, k)

    def __len__(self):
        return len(list.__getitem__(self, 0))


@probe("mobilenet")
def _mobilenet(name, tf, keras, L, rng):
    """Depthwise-separable CNN on CIFAR shapes."""
    B, N = 64, 12
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((32, 32, 3)),
        L.Conv2D(32, 3, strides=2, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
    ]
    for f, s in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1)):
        layers += [
            L.DepthwiseConv2D(3, strides=s, padding="same", use_bias=False),
            L.BatchNormalization(),
            L.ReLU(6.0),
            L.Conv2D(f, 1, use_bias=False),
            L.BatchNormalization(),
            L.ReLU(6.0),
        ]
    layers += [L.GlobalAveragePooling2D(), L.Dense(10)]
    return B, N, x, y, keras.Sequential(layers)


@probe("unet")
def _unet(name, tf, keras, L, rng):
    """Small encoder-decoder with UpSampling + Concatenate (functional)."""
    B, N = 16, 10
    x = rng.random((B * N, 64, 64, 3), dtype=np.float32)
    y = rng.integers(0, 2, (B * N, 64, 64, 1)).astype("int32")
    inp = keras.Input((64, 64, 3))
    c1 = L.Conv2D(16, 3, padding="same", activation="relu")(inp)
    p1 = L.MaxPooling2D()(c1)
    c2 = L.Conv2D(32, 3, padding="same", activation="relu")(p1)
    p2 = L.MaxPooling2D()(c2)
    c3 = L.Conv2D(64, 3, padding="same", activation="relu")(p2)
    u2 = L.Concatenate()([L.UpSampling2D()(c3), c2])
    c4 = L.Conv2D(32, 3, padding="same", activation="relu")(u2)
    u1 = L.Concatenate()([L.UpSampling2D()(c4), c1])
    c5 = L.Conv2D(16, 3, padding="same", activation="relu")(u1)
    out = L.Conv2D(2, 1)(c5)
    model = keras.Model(inp, out)
    return B, N, x, y, model


@probe("vit")
def _vit(name, tf, keras, L, rng):
    """Tiny ViT: patches by Conv2D, position embedding, 2 encoder blocks."""
    B, N = 64, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    inp = keras.Input((32, 32, 3))
    h = L.Reshape((64, 64))(L.Conv2D(64, 4, strides=4)(inp))
    h = h + L.Embedding(64, 64)(np.arange(64)[None])
    for _ in range(2):
        a = L.MultiHeadAttention(4, 16)(L.LayerNormalization()(h), L.LayerNormalization()(h))
        h = h + a
        f = L.Dense(128, activation="gelu")(L.LayerNormalization()(h))
        h = h + L.Dense(64)(f)
    model = keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling1D()(L.LayerNormalization()(h))))
    return B, N, x, y, model


@probe("deconv")
def _deconv(name, tf, keras, L, rng):
    """Convolutional denoising autoencoder with Conv2DTranspose."""
    B, N = 32, 10
    x = rng.random((B * N, 28, 28, 1), dtype=np.float32)
    y = x.copy()
    layers = [
        keras.Input((28, 28, 1)),
        L.Conv2D(32, 3, activation="relu", padding="same"),
        L.MaxPooling2D(2, padding="same"),
        L.Conv2D(32, 3, activation="relu", padding="same"),
        L.MaxPooling2D(2, padding="same"),
        L.Conv2DTranspose(32, 3, strides=2, activation="relu", padding="same"),
        L.Conv2DTranspose(32, 3, strides=2, activation="relu", padding="same"),
        L.Conv2D(1, 3, activation="sigmoid", padding="same"),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("resnext")
def _resnext(name, tf, keras, L, rng):
    """Grouped convolutions (groups=8), ResNeXt-style blocks."""
    B, N = 32, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    inp = keras.Input((32, 32, 3))
    h = L.Conv2D(64, 3, padding="same", activation="relu")(inp)
    for _ in range(2):
        r = L.Conv2D(64, 1, activation="relu")(h)
        r = L.Conv2D(64, 3, padding="same", groups=8, activation="relu")(r)
        h = L.ReLU()(h + L.BatchNormalization()(L.Conv2D(64, 1)(r)))
    model = keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(h)))
    return B, N, x, y, model


@probe("dilated")
def _dilated(name, tf, keras, L, rng):
    """Atrous convolutions (dilation_rate 2, 4)."""
    B, N = 16, 10
    x = rng.random((B * N, 64, 64, 3), dtype=np.float32)
    y = rng.integers(0, 2, (B * N, 64, 64, 1)).astype("int32")
    layers = [
        keras.Input((64, 64, 3)),
        L.Conv2D(32, 3, padding="same", activation="relu"),
        L.Conv2D(32, 3, padding="same", dilation_rate=2, activation="relu"),
        L.Conv2D(32, 3, padding="same", dilation_rate=4, activation="relu"),
        L.Conv2D(2, 1),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("stft")
def _stft(name, tf, keras, L, rng):
    """Audio: STFT spectrogram in the model (Lambda), then a small CNN."""
    B, N = 16, 10
    x = rng.standard_normal((B * N, 16000)).astype("float32")
    y = rng.integers(0, 10, B * N).astype("int32")
    spec = L.Lambda(lambda w: tf.expand_dims(tf.abs(tf.signal.stft(w, 255, 128)), -1))
    layers = [
        keras.Input((16000,)),
        spec,
        L.Resizing(32, 32),
        L.Conv2D(32, 3, activation="relu"),
        L.Conv2D(64, 3, activation="relu"),
        L.MaxPooling2D(),
        L.Dropout(0.25),
        L.Flatten(),
        L.Dense(128, activation="relu"),
        L.Dense(10),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("bf16cnn")
def _bf16cnn(name, tf, keras, L, rng):
    """CIFAR CNN under keras mixed_bfloat16 policy."""
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    B, N = 64, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((32, 32, 3)),
        L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(),
        L.Conv2D(64, 3, activation="relu"),
        L.MaxPooling2D(),
        L.Flatten(),
        L.Dense(128, activation="relu"),
        L.Dense(10, dtype="float32"),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("augcnn")
def _augcnn(name, tf, keras, L, rng):
    """CIFAR CNN with Keras augmentation layers in the model."""
    B, N = 64, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((32, 32, 3)),
        L.RandomFlip("horizontal"),
        L.RandomRotation(0.1),
        L.RandomZoom(0.1),
        L.Conv2D(32, 3, activation="relu"),
        L.MaxPooling2D(),
        L.Conv2D(64, 3, activation="relu"),
        L.GlobalAveragePooling2D(),
        L.Dense(10),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("sepconv")
def _sepconv(name, tf, keras, L, rng):
    """Xception-style separable convs with batch norm."""
    B, N = 32, 10
    x = rng.random((B * N, 64, 64, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((64, 64, 3)),
        L.Conv2D(32, 3, strides=2, padding="same"),
        L.BatchNormalization(),
        L.Activation("relu"),
        L.SeparableConv2D(64, 3, padding="same"),
        L.BatchNormalization(),
        L.Activation("relu"),
        L.MaxPooling2D(3, strides=2, padding="same"),
        L.SeparableConv2D(128, 3, padding="same"),
        L.BatchNormalization(),
        L.Activation("relu"),
        L.GlobalAveragePooling2D(),
        L.Dense(10),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("conv3d")
def _conv3d(name, tf, keras, L, rng):
    """A small Conv3D video classifier: clips of 16 frames of 32x32x3."""
    B, N = 8, 10
    x = rng.random((B * N, 16, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 5, B * N).astype("int32")
    layers = [
        keras.Input((16, 32, 32, 3)),
        L.Conv3D(16, 3, activation="relu"),
        L.MaxPooling3D(2),
        L.Conv3D(32, 3, activation="relu"),
        L.GlobalAveragePooling3D(),
        L.Dense(5),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("groupnorm")
def _groupnorm(name, tf, keras, L, rng):
    """CNN with GroupNormalization(8) and swish."""
    B, N = 32, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((32, 32, 3)),
        L.Conv2D(32, 3, padding="same"),
        L.GroupNormalization(8),
        L.Activation("swish"),
        L.Conv2D(64, 3, strides=2, padding="same"),
        L.GroupNormalization(8),
        L.Activation("swish"),
        L.GlobalAveragePooling2D(),
        L.Dense(10),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("seblock")
def _seblock(name, tf, keras, L, rng):
    """EfficientNet-style MBConv with squeeze-and-excitation."""
    B, N = 32, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    inp = keras.Input((32, 32, 3))
    h = L.Activation("swish")(L.BatchNormalization()(L.Conv2D(32, 3, padding="same")(inp)))
    for c in (32, 64):
        e = L.Activation("swish")(L.BatchNormalization()(L.Conv2D(c * 4, 1)(h)))
        e = L.Activation("swish")(L.BatchNormalization()(L.DepthwiseConv2D(3, padding="same")(e)))
        se = L.Dense(c * 4, activation="sigmoid")(
            L.Dense(c // 4, activation="swish")(L.GlobalAveragePooling2D()(e))
        )
        e = L.Multiply()([e, L.Reshape((1, 1, c * 4))(se)])
        h = L.BatchNormalization()(L.Conv2D(c, 1)(e))
    model = keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(h)))
    return B, N, x, y, model


@probe("mixer")
def _mixer(name, tf, keras, L, rng):
    """MLP-Mixer block: token mixing by transposes."""
    B, N = 32, 10
    x = rng.random((B * N, 64, 96), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    inp = keras.Input((64, 96))
    h = inp
    for _ in range(2):
        t = L.Permute((2, 1))(L.LayerNormalization()(h))
        t = L.Dense(64)(L.Dense(128, activation="gelu")(t))
        h = h + L.Permute((2, 1))(t)
        c = L.Dense(96)(L.Dense(192, activation="gelu")(L.LayerNormalization()(h)))
        h = h + c
    model = keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling1D()(h)))
    return B, N, x, y, model


@probe("vgg")
def _vgg(name, tf, keras, L, rng):
    """VGG-style CIFAR CNN: BN, Dropout, AveragePooling."""
    B, N = 64, 10
    x = rng.random((B * N, 32, 32, 3), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [keras.Input((32, 32, 3))]
    for c in (32, 64, 128):
        layers += [
            L.Conv2D(c, 3, padding="same", activation="relu"),
            L.BatchNormalization(),
            L.Conv2D(c, 3, padding="same", activation="relu"),
            L.BatchNormalization(),
            L.AveragePooling2D(2),
            L.Dropout(0.25),
        ]
    layers += [L.Flatten(), L.Dense(128, activation="relu"), L.Dropout(0.5), L.Dense(10)]
    return B, N, x, y, keras.Sequential(layers)


@probe("mnv2", "effb0", "densenet")
def _mnv2_effb0_densenet(name, tf, keras, L, rng):
    """A keras.applications model (weights=None) trained from scratch, 96x96."""
    B, N = 16, 6
    x = rng.random((B * N, 96, 96, 3), dtype=np.float32) * 255
    y = rng.integers(0, 10, B * N).astype("int32")
    ctor = {
        "mnv2": keras.applications.MobileNetV2,
        "effb0": keras.applications.EfficientNetB0,
        "densenet": keras.applications.DenseNet121,
    }[name]
    model = ctor(weights=None, input_shape=(96, 96, 3), classes=10, classifier_activation=None)
    return B, N, x, y, model

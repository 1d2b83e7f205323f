"""Sequence, text and tabular model probes (see probe_zoo.py)."""

from __future__ import annotations

import numpy as np
from probe_zoo import Multi, probe


@probe("conv1d")
def _conv1d(name, tf, keras, L, rng):
    """Text CNN."""
    B, N = 64, 20
    x = rng.integers(0, 20000, (B * N, 200)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((200,), dtype="int32"),
        L.Embedding(20000, 128),
        L.Conv1D(128, 5, activation="relu"),
        L.MaxPooling1D(5),
        L.Conv1D(128, 5, activation="relu"),
        L.GlobalMaxPooling1D(),
        L.Dense(64, activation="relu"),
        L.Dropout(0.5),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("gru")
def _gru(name, tf, keras, L, rng):
    """Embedding + Bidirectional(GRU(64)) classifier, seq 100."""
    B, N = 64, 20
    x = rng.integers(0, 10000, (B * N, 100)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((100,), dtype="int32"),
        L.Embedding(10000, 64),
        L.Bidirectional(L.GRU(64)),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("mlstm", "mgru")
def _mlstm_mgru(name, tf, keras, L, rng):
    """Embedding(mask_zero) + LSTM(128) or GRU(128) over padded sequences 20-100."""
    B, N = 64, 20
    x = rng.integers(1, 10000, (B * N, 100)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    lens = rng.integers(20, 101, B * N)
    x[np.arange(100)[None, :] >= lens[:, None]] = 0
    layers = [
        keras.Input((100,), dtype="int32"),
        L.Embedding(10000, 64, mask_zero=True),
        (L.LSTM if name == "mlstm" else L.GRU)(128),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("srnn")
def _srnn(name, tf, keras, L, rng):
    """Embedding + SimpleRNN(128) classifier, seq 100."""
    B, N = 64, 20
    x = rng.integers(0, 10000, (B * N, 100)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((100,), dtype="int32"),
        L.Embedding(10000, 64),
        L.SimpleRNN(128),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("rdlstm")
def _rdlstm(name, tf, keras, L, rng):
    """Recurrent dropout: the generic loop on both sides."""
    B, N = 64, 20
    x = rng.integers(0, 10000, (B * N, 50)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((50,), dtype="int32"),
        L.Embedding(10000, 64),
        L.LSTM(64, recurrent_dropout=0.2),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("rdgru")
def _rdgru(name, tf, keras, L, rng):
    """Chollet's temperature forecaster: GRU with dropout + recurrent dropout."""
    B, N = 256, 10
    x = rng.standard_normal((B * N, 120, 14)).astype("float32")
    y = rng.standard_normal((B * N, 1)).astype("float32")
    layers = [keras.Input((120, 14)), L.GRU(32, dropout=0.2, recurrent_dropout=0.25), L.Dense(1)]
    return B, N, x, y, keras.Sequential(layers)


@probe("rdstack")
def _rdstack(name, tf, keras, L, rng):
    """Stacked LSTMs with recurrent dropout (return_sequences)."""
    B, N = 64, 20
    x = rng.integers(0, 10000, (B * N, 80)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((80,), dtype="int32"),
        L.Embedding(10000, 32),
        L.LSTM(32, dropout=0.1, recurrent_dropout=0.3, return_sequences=True),
        L.LSTM(32, recurrent_dropout=0.3),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("tiny")
def _tiny(name, tf, keras, L, rng):
    """Calibration: fit-loop overhead (one Dense)."""
    B, N = 256, 40
    x = rng.random((B * N, 16), dtype=np.float32)
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [keras.Input((16,)), L.Dense(2)]
    return B, N, x, y, keras.Sequential(layers)


@probe("emb8")
def _emb8(name, tf, keras, L, rng):
    """Eight embedding lookups and nothing else."""
    B, N = 256, 20
    cats = rng.integers(0, 1000, (B * N, 8)).astype("int32")
    x = cats
    y = rng.integers(0, 2, B * N).astype("int32")
    ci = keras.Input((8,), dtype="int32")
    embs = [L.Flatten()(L.Embedding(1000, 8)(ci[:, i : i + 1])) for i in range(8)]
    model = keras.Model(ci, L.Dense(2)(L.Concatenate()(embs)))
    return B, N, x, y, model


@probe("convlstm")
def _convlstm(name, tf, keras, L, rng):
    """ConvLSTM2D next-frame style classifier."""
    B, N = 8, 10
    x = rng.random((B * N, 10, 16, 16, 1), dtype=np.float32)
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((10, 16, 16, 1)),
        L.ConvLSTM2D(16, 3, padding="same", return_sequences=True),
        L.BatchNormalization(),
        L.ConvLSTM2D(16, 3, padding="same"),
        L.GlobalAveragePooling2D(),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("regress")
def _regress(name, tf, keras, L, rng):
    """TF regression tutorial: Normalization + Dense(64)x2, batch 32."""
    B, N = 32, 40
    x = rng.random((B * N, 9), dtype=np.float32)
    y = rng.random((B * N, 1), dtype=np.float32)
    norm = L.Normalization(axis=-1)
    norm.adapt(x)
    layers = [
        keras.Input((9,)),
        norm,
        L.Dense(64, activation="relu"),
        L.Dense(64, activation="relu"),
        L.Dense(1),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("adamw")
def _adamw(name, tf, keras, L, rng):
    """LayerNorm MLP trained with AdamW."""
    B, N = 128, 20
    x = rng.random((B * N, 256), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((256,)),
        L.Dense(512, activation="gelu"),
        L.LayerNormalization(),
        L.Dense(512, activation="gelu"),
        L.LayerNormalization(),
        L.Dense(10),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("bert")
def _bert(name, tf, keras, L, rng):
    """Encoder with a padding mask reaching MultiHeadAttention (mask_zero)."""
    B, N = 32, 10
    x = rng.integers(1, 8000, (B * N, 64)).astype("int32")
    x[:, 48:] = 0
    y = rng.integers(0, 2, B * N).astype("int32")
    inp = keras.Input((64,), dtype="int32")
    h = L.Embedding(8000, 128, mask_zero=True)(inp)
    for _ in range(2):
        a = L.MultiHeadAttention(4, 32, dropout=0.1)(h, h)
        h = L.LayerNormalization()(h + a)
        f = L.Dense(256, activation="gelu")(h)
        h = L.LayerNormalization()(h + L.Dense(128)(f))
    model = keras.Model(inp, L.Dense(2)(L.GlobalAveragePooling1D()(h)))
    return B, N, x, y, model


@probe("conv1dgru")
def _conv1dgru(name, tf, keras, L, rng):
    """Conv1D front end + GRU on a long signal."""
    B, N = 32, 10
    x = rng.standard_normal((B * N, 400, 8)).astype("float32")
    y = rng.integers(0, 5, B * N).astype("int32")
    layers = [
        keras.Input((400, 8)),
        L.Conv1D(64, 7, strides=2, activation="relu"),
        L.MaxPooling1D(2),
        L.Conv1D(64, 5, activation="relu"),
        L.GRU(64),
        L.Dropout(0.3),
        L.Dense(5),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("charrnn")
def _charrnn(name, tf, keras, L, rng):
    """Char-level language model: GRU(256) and a softmax at every step."""
    B, N = 64, 10
    x = rng.integers(0, 65, (B * N, 100)).astype("int32")
    y = rng.integers(0, 65, (B * N, 100)).astype("int32")
    layers = [
        keras.Input((100,), dtype="int32"),
        L.Embedding(65, 64),
        L.GRU(256, return_sequences=True),
        L.Dense(65),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("imdb")
def _imdb(name, tf, keras, L, rng):
    """Embedding + GlobalAveragePooling1D text classifier (TF tutorial)."""
    B, N = 32, 40
    x = rng.integers(0, 10000, (B * N, 256)).astype("int32")
    y = rng.integers(0, 2, B * N).astype("int32")
    layers = [
        keras.Input((256,), dtype="int32"),
        L.Embedding(10000, 16),
        L.Dropout(0.2),
        L.GlobalAveragePooling1D(),
        L.Dropout(0.2),
        L.Dense(2),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("tdist")
def _tdist(name, tf, keras, L, rng):
    """TimeDistributed Dense + Conv1D + LayerNorm sequence tagger."""
    B, N = 32, 20
    x = rng.random((B * N, 50, 32), dtype=np.float32)
    y = rng.integers(0, 5, (B * N, 50)).astype("int32")
    layers = [
        keras.Input((50, 32)),
        L.TimeDistributed(L.Dense(64, activation="relu")),
        L.Conv1D(64, 5, padding="same", activation="relu"),
        L.LayerNormalization(),
        L.Dense(5),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("gpt")
def _gpt(name, tf, keras, L, rng):
    """Small causal transformer LM."""
    B, N = 16, 10
    x = rng.integers(0, 5000, (B * N, 128)).astype("int32")
    y = rng.integers(0, 5000, (B * N, 128)).astype("int32")
    inp = keras.Input((128,), dtype="int32")
    h = L.Embedding(5000, 128)(inp) + L.Embedding(128, 128)(tf.range(128))
    a = L.MultiHeadAttention(4, 32)(h, h, use_causal_mask=True)
    h = L.LayerNormalization()(h + a)
    f = L.Dense(128)(L.Dense(512, activation="gelu")(h))
    h = L.LayerNormalization()(h + f)
    model = keras.Model(inp, L.Dense(5000)(h))
    return B, N, x, y, model


@probe("lm")
def _lm(name, tf, keras, L, rng):
    """LSTM language model with a 10K softmax at every step."""
    B, N = 32, 10
    x = rng.integers(0, 10000, (B * N, 35)).astype("int32")
    y = rng.integers(0, 10000, (B * N, 35)).astype("int32")
    layers = [
        keras.Input((35,), dtype="int32"),
        L.Embedding(10000, 128),
        L.LSTM(256, return_sequences=True),
        L.Dense(10000),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("clipnorm")
def _clipnorm(name, tf, keras, L, rng):
    """MLP, clipnorm + a learning-rate schedule."""
    B, N = 128, 20
    x = rng.random((B * N, 256), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((256,)),
        L.Dense(512, activation="relu"),
        L.Dense(512, activation="relu"),
        L.Dense(10),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("widedeep")
def _widedeep(name, tf, keras, L, rng):
    """Many categorical embeddings + numeric features, two inputs."""
    B, N = 256, 20
    cats = rng.integers(0, 1000, (B * N, 8)).astype("int32")
    nums = rng.random((B * N, 16), dtype=np.float32)
    x = Multi([cats, nums])
    y = rng.integers(0, 2, B * N).astype("float32")
    ci = keras.Input((8,), dtype="int32")
    ni = keras.Input((16,))
    embs = [L.Flatten()(L.Embedding(1000, 8)(ci[:, i : i + 1])) for i in range(8)]
    deep = L.Dense(128, activation="relu")(L.Concatenate()(embs + [ni]))
    deep = L.Dense(64, activation="relu")(deep)
    out = L.Dense(1)(L.Concatenate()([deep, ni]))
    model = keras.Model([ci, ni], out)
    return B, N, x, y, model


@probe("seq2seq")
def _seq2seq(name, tf, keras, L, rng):
    """BiLSTM encoder, LSTM decoder, AdditiveAttention, TimeDistributed softmax."""
    B, N = 32, 10
    x = Multi(
        [
            rng.integers(0, 5000, (B * N, 30)).astype("int32"),
            rng.integers(0, 5000, (B * N, 20)).astype("int32"),
        ]
    )
    y = rng.integers(0, 5000, (B * N, 20)).astype("int32")
    ei = keras.Input((30,), dtype="int32")
    di = keras.Input((20,), dtype="int32")
    enc = L.Bidirectional(L.LSTM(64, return_sequences=True))(L.Embedding(5000, 64)(ei))
    dec = L.LSTM(128, return_sequences=True)(L.Embedding(5000, 64)(di))
    ctx = L.AdditiveAttention()([dec, enc])
    model = keras.Model([ei, di], L.Dense(5000)(L.Concatenate()([dec, ctx])))
    return B, N, x, y, model


@probe("tutorial")
def _tutorial(name, tf, keras, L, rng):
    """TF's beginner tutorial: softmax output, from_logits=False, batch 32."""
    B, N = 32, 40
    x = rng.random((B * N, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, B * N).astype("int32")
    layers = [
        keras.Input((28, 28)),
        L.Flatten(),
        L.Dense(128, activation="relu"),
        L.Dropout(0.2),
        L.Dense(10, activation="softmax"),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("tagger")
def _tagger(name, tf, keras, L, rng):
    """Stacked LSTMs, a Dense at every step."""
    B, N = 32, 20
    x = rng.integers(0, 8000, (B * N, 60)).astype("int32")
    y = rng.integers(0, 12, (B * N, 60)).astype("int32")
    layers = [
        keras.Input((60,), dtype="int32"),
        L.Embedding(8000, 64),
        L.Bidirectional(L.LSTM(64, return_sequences=True)),
        L.LSTM(64, return_sequences=True),
        L.Dense(12),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("huber")
def _huber(name, tf, keras, L, rng):
    """Regression MLP, Huber loss."""
    B, N = 128, 20
    x = rng.random((B * N, 32), dtype=np.float32)
    y = rng.random((B * N, 1), dtype=np.float32)
    layers = [
        keras.Input((32,)),
        L.Dense(64, activation="elu"),
        L.Dense(64, activation="elu"),
        L.Dense(1),
    ]
    return B, N, x, y, keras.Sequential(layers)


@probe("autoencoder")
def _autoencoder(name, tf, keras, L, rng):
    """Dense autoencoder, MSE, big batch."""
    B, N = 256, 20
    x = rng.random((B * N, 784), dtype=np.float32)
    y = x
    layers = [
        keras.Input((784,)),
        L.Dense(256, activation="relu"),
        L.Dense(64, activation="relu"),
        L.Dense(256, activation="relu"),
        L.Dense(784, activation="sigmoid"),
    ]
    return B, N, x, y, keras.Sequential(layers)

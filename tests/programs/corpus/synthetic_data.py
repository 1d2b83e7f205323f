"""Offline stand-ins for the datasets the corpus programs download: the same shapes and dtypes
as the real data (fewer samples), drawn from fixed-seed NumPy generators, with a signal a
model can learn wherever the program reports an accuracy."""

from __future__ import annotations

import os

import numpy as np


def mnist_load_data(n_train=1024, n_test=256, seed=0):
    """`keras.datasets.mnist.load_data()`: uint8 (n, 28, 28) digits and uint8 labels. Each
    class is a fixed 7x7 pattern of blocks (upsampled to 28x28), faint and shifted by up
    to 2 pixels, under strong noise: learnable, not at once."""
    rng = np.random.default_rng(seed)
    templates = (rng.random((10, 7, 7)) < 0.35).repeat(4, axis=1).repeat(4, axis=2)

    def draw(n):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = templates[labels] * 110.0 + rng.normal(50.0, 60.0, (n, 28, 28))
        for i, (dy, dx) in enumerate(rng.integers(-2, 3, (n, 2))):
            images[i] = np.roll(images[i], (dy, dx), axis=(0, 1))
        return np.clip(images, 0, 255).astype(np.uint8), labels

    return draw(n_train), draw(n_test)


def imdb_load_data(num_words=20000, n_train=512, n_test=256, seed=0, min_len=40,
                   max_len=240):
    """`keras.datasets.imdb.load_data(num_words=...)`: object arrays of int lists (each one
    starting with the start character 1, word ids below `num_words`) and int64 0/1 labels.
    Positive and negative reviews draw 30% of their words from two disjoint id ranges."""
    rng = np.random.default_rng(seed)
    positive, negative = np.arange(20, 120), np.arange(120, 220)

    def draw(n):
        labels = rng.integers(0, 2, n).astype(np.int64)
        reviews = np.empty(n, dtype=object)
        for i, label in enumerate(labels):
            length = int(rng.integers(min_len, max_len))
            words = rng.integers(220, num_words, length)
            marked = rng.random(length) < 0.3
            words[marked] = rng.choice(positive if label else negative, int(marked.sum()))
            reviews[i] = [1] + words.tolist()
        return reviews, labels

    return draw(n_train), draw(n_test)


_POSITIVE = ("great", "wonderful", "superb", "moving", "brilliant", "loved", "fine",
             "touching", "best", "delightful")
_NEGATIVE = ("awful", "boring", "terrible", "dull", "worst", "waste", "poor", "hated",
             "bland", "tedious")
_NEUTRAL = tuple(f"w{i}" for i in range(400)) + ("the", "a", "movie", "film", "and", "it",
                                                  "plot", "actor", "scene", "was")


def write_imdb_text_dir(root, n_train=200, n_test=100, seed=0):
    """The aclImdb folder `keras.utils.get_file(...aclImdb_v1.tar.gz, extract=True)` makes:
    root/aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt reviews with `<br />` tags and
    punctuation. Returns root/aclImdb."""
    rng = np.random.default_rng(seed)
    base = os.path.join(root, "aclImdb")
    for split, n in (("train", n_train), ("test", n_test)):
        for label, words in (("pos", _POSITIVE), ("neg", _NEGATIVE)):
            folder = os.path.join(base, split, label)
            os.makedirs(folder, exist_ok=True)
            for i in range(n // 2):
                length = int(rng.integers(30, 120))
                tokens = [str(rng.choice(words)) if rng.random() < 0.15
                          else str(rng.choice(_NEUTRAL)) for _ in range(length)]
                for j in rng.integers(0, length, 3):
                    tokens[j] = tokens[j].capitalize() + rng.choice([".", ",", "!", "?"])
                tokens.insert(length // 2, "<br /><br />")
                rating = int(rng.integers(7, 11) if label == "pos" else rng.integers(1, 5))
                with open(os.path.join(folder, f"{i}_{rating}.txt"), "w") as f:
                    f.write(" ".join(tokens))
    return base


def write_ucr_tsv(path, n, length=500, seed=0):
    """A UCR archive TSV file (FordA): per line a label in {-1, 1} then `length`
    z-normalized values. The classes differ in their dominant frequency."""
    rng = np.random.default_rng(seed)
    labels = rng.choice([-1, 1], n)
    t = np.arange(length)
    freq = np.where(labels == 1, 0.05, 0.08)[:, None] * rng.uniform(0.9, 1.1, (n, 1))
    x = np.sin(2 * np.pi * freq * t + rng.uniform(0, 2 * np.pi, (n, 1)))
    x += rng.normal(0, 0.8, (n, length))
    x = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    np.savetxt(path, np.concatenate([labels[:, None], x], axis=1), delimiter="\t",
               fmt="%.6f")


def write_creditcard_csv(path, n=4096, seed=0):
    """Kaggle's creditcard.csv: a quoted header "Time","V1".."V28","Amount","Class", then per
    line 30 float features and a 0/1 class (about 2% frauds, shifted in V1..V4)."""
    rng = np.random.default_rng(seed)
    fraud = rng.random(n) < 0.02
    v = rng.normal(0, 1, (n, 28))
    v[fraud, :4] += rng.normal(1.0, 0.5, (int(fraud.sum()), 4))
    time = np.sort(rng.uniform(0, 172792, n))
    amount = np.round(rng.exponential(88.0, n), 2)
    header = ",".join(f'"{c}"' for c in ["Time"] + [f"V{i}" for i in range(1, 29)]
                      + ["Amount", "Class"])
    with open(path, "w") as f:
        f.write(header + "\n")
        for i in range(n):
            values = [f"{time[i]:.1f}"] + [f"{x:.6f}" for x in v[i]] + [f"{amount[i]:.2f}"]
            f.write(",".join(values) + f',"{int(fraud[i])}"\n')


def write_jena_csv(path, n=3000, seed=0):
    """jena_climate_2009_2016.csv: a "Date Time" column then the 14 weather readings, one
    row every 10 minutes, no trailing newline (as in the archive). The temperature (column
    2) follows a daily cycle plus noise; the other readings are correlated with it."""
    rng = np.random.default_rng(seed)
    header = ['"Date Time"', '"p (mbar)"', '"T (degC)"', '"Tpot (K)"', '"Tdew (degC)"',
              '"rh (%)"', '"VPmax (mbar)"', '"VPact (mbar)"', '"VPdef (mbar)"',
              '"sh (g/kg)"', '"H2OC (mmol/mol)"', '"rho (g/m**3)"', '"wv (m/s)"',
              '"max. wv (m/s)"', '"wd (deg)"']
    step = np.arange(n)
    temp = 8 + 6 * np.sin(2 * np.pi * step / 144) + np.cumsum(rng.normal(0, 0.05, n))
    temp += rng.normal(0, 0.3, n)
    cols = [990 + rng.normal(0, 3, n), temp, temp + 273.5, temp - 4 + rng.normal(0, 1, n),
            75 - 2 * temp + rng.normal(0, 5, n), 10 + 0.8 * temp, 8 + 0.3 * temp,
            2 + 0.5 * temp, 5 + 0.2 * temp, 8 + 0.3 * temp, 1250 - 4 * temp,
            np.abs(rng.normal(2, 1, n)), np.abs(rng.normal(3.5, 1.5, n)),
            rng.uniform(0, 360, n)]
    lines = [",".join(header)]
    for i in range(n):
        day, minute = divmod(i * 10, 1440)
        stamp = f"{1 + day % 28:02d}.01.2009 {minute // 60:02d}:{minute % 60:02d}:00"
        lines.append(",".join([stamp] + [f"{c[i]:.2f}" for c in cols]))
    with open(path, "w") as f:
        f.write("\n".join(lines))


def cifar10_load_data(n_train=1024, n_test=256, seed=0):
    """`keras.datasets.cifar10.load_data()`: uint8 (n, 32, 32, 3) images and uint8 (n, 1)
    labels. Each class tints a fixed 8x8 pattern of blocks (upsampled to 32x32) over
    noise: learnable, not at once."""
    rng = np.random.default_rng(seed)
    templates = rng.random((10, 8, 8, 3)).repeat(4, axis=1).repeat(4, axis=2)

    def draw(n):
        labels = rng.integers(0, 10, (n, 1)).astype(np.uint8)
        images = templates[labels[:, 0]] * 120.0 + rng.normal(70.0, 50.0, (n, 32, 32, 3))
        return np.clip(images, 0, 255).astype(np.uint8), labels

    return draw(n_train), draw(n_test)

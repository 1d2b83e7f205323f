"""`tf.keras.preprocessing.image`'s legacy ImageDataGenerator and transforms against Keras
3.15 with SciPy (tests/fixtures/image_data_generator): affine resampling for rotations,
shifts, shears and zooms in the nearest/constant/reflect modes at orders 0 and 1, channel and
brightness shifts, a generator's seeded random parameters and `flow` batches, featurewise
statistics; `flow_from_directory` (classes, subsets, class modes) and `fit` on both."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import ndflow as tf

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "image_data_generator")
V = np.load(os.path.join(HERE, "values.npz"))
PARAMS = json.load(open(os.path.join(HERE, "params.json")))
P = tf.keras.preprocessing.image
AFFINE = {"rotate": {"theta": 30}, "shift": {"tx": 2.5, "ty": -1.5}, "shear": {"shear": 20},
          "zoom": {"zx": 0.8, "zy": 1.3},
          "all": {"theta": -15, "tx": 1, "ty": 2, "shear": 10, "zx": 1.1, "zy": 0.9}}


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", ["nearest", "constant", "reflect"])
@pytest.mark.parametrize("name", sorted(AFFINE))
def test_affine_transform_equals_keras(name, mode, order):
    got = P.apply_affine_transform(V["img"], row_axis=0, col_axis=1, channel_axis=2,
                                   fill_mode=mode, cval=7.0, order=order, **AFFINE[name])
    want = V[f"affine_{name}_{mode}_{order}"]
    if order == 0:
        # nearest sampling: a coordinate within rounding of a pixel boundary may pick the
        # other pixel (2 of 99 here); SciPy's order-0 'reflect' also picks other border
        # samples than its order-1 extension (ndflow extends both alike): the interior agrees
        if mode == "reflect":
            got, want = got[3:-3, 3:-3], want[3:-3, 3:-3]
        assert np.sum(~np.isclose(got, want, rtol=1e-6).all(-1)) <= 3
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def _generator():
    return P.ImageDataGenerator(rotation_range=25, width_shift_range=0.2, height_shift_range=3,
                                shear_range=10, zoom_range=0.2, channel_shift_range=20,
                                horizontal_flip=True, vertical_flip=True,
                                brightness_range=(0.8, 1.2), fill_mode="reflect",
                                rescale=1 / 255.0)


def test_shifts_random_parameters_and_flow_equal_keras():
    np.testing.assert_allclose(P.apply_channel_shift(V["img"], 40.0, channel_axis=2),
                               V["channel_shift"], rtol=1e-6)
    np.testing.assert_allclose(P.apply_brightness_shift(V["img"], 1.4, scale=False),
                               V["brightness"], rtol=1e-5, atol=1e-3)
    gen = _generator()
    for seed, want in zip((1, 2, 3), PARAMS):
        got = gen.get_random_transform(V["img"].shape, seed=seed)
        assert got.keys() == want.keys()
        for key, value in want.items():
            assert (got[key] is None and value is None) or float(got[key]) == \
                pytest.approx(value, rel=1e-9, abs=1e-12), key
    x, y = next(_generator().flow(V["batch_x"], np.arange(6), batch_size=4, seed=5))
    np.testing.assert_array_equal(y, V["flow_y"])
    np.testing.assert_allclose(x, V["flow_x"], rtol=1e-4, atol=2e-3)


def test_featurewise_fit_and_standardize():
    gen = P.ImageDataGenerator(featurewise_center=True, featurewise_std_normalization=True)
    gen.fit(V["batch_x"])
    np.testing.assert_allclose(gen.mean, V["fit_mean"], rtol=1e-5)
    np.testing.assert_allclose(gen.std, V["fit_std"], rtol=1e-5)
    np.testing.assert_allclose(gen.standardize(V["batch_x"][0].copy()), V["fit_standardized"],
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="Input to `.fit\\(\\)` should have rank 4"):
        gen.fit(V["img"])


def test_flow_from_directory_and_fit(tmp_path):
    from PIL import Image
    rng = np.random.default_rng(1)
    for cls in ("cats", "dogs", "fish"):
        (tmp_path / cls).mkdir()
        for i in range(4):
            Image.fromarray(rng.integers(0, 255, (12, 10, 3), dtype=np.uint8)).save(
                tmp_path / cls / f"{i}.png")
    gen = P.ImageDataGenerator(rescale=1 / 255.0, horizontal_flip=True, validation_split=0.25)
    train = gen.flow_from_directory(str(tmp_path), target_size=(8, 8), batch_size=3,
                                    subset="training", seed=1)
    val = gen.flow_from_directory(str(tmp_path), target_size=(8, 8), batch_size=3,
                                  class_mode="sparse", subset="validation", shuffle=False)
    assert train.class_indices == {"cats": 0, "dogs": 1, "fish": 2}
    assert (train.samples, val.samples, len(train)) == (9, 3, 3)
    assert val.filenames == [os.path.join(c, "0.png") for c in ("cats", "dogs", "fish")]
    x, y = train[0]
    assert x.shape == (3, 8, 8, 3) and y.shape == (3, 3) and 0.0 <= x.min() and x.max() <= 1.0
    np.testing.assert_array_equal(val[0][1], [0.0, 1.0, 2.0])
    model = tf.keras.Sequential([tf.keras.Input((8, 8, 3)), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(3, activation="softmax")])
    model.compile("adam", "categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(train, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    arrays = gen.flow(np.ones((8, 8, 8, 3), np.float32) * 255, np.eye(3)[[0, 1, 2, 0] * 2],
                      batch_size=4, subset="training", ignore_class_split=True)
    assert model.fit(arrays, epochs=1, verbose=0).history["loss"]
    with pytest.raises(ValueError, match="Invalid class_mode"):
        gen.flow_from_directory(str(tmp_path), class_mode="onehot")
    with pytest.raises(ValueError, match="should have rank 4"):
        gen.flow(np.ones((3, 4, 4)))

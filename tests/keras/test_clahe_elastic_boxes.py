"""ContrastLimitedAdaptiveHistogramEqualization, RandomElasticTransform and MaxNumBoundingBoxes
(ndflow/keras/layers/image_clahe.py, image_elastic.py, max_num_bounding_boxes.py) against
Keras 3 on TF 2.21 (tests/fixtures/keras_clahe_elastic_boxes): outputs, seeded random draws,
configs and their round trip, bounding-box dicts, Keras' errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ndflow as tf
from tests import fixture_modules

keras = tf.keras
HERE = fixture_modules.FIXTURES / "keras_clahe_elastic_boxes"
CONFIGS = fixture_modules.load("keras_clahe_elastic_boxes")
KERAS = np.load(HERE / "values.npz")
KERAS_CONFIGS = json.loads((HERE / "configs.json").read_text())


def _config(layer):
    config = json.loads(json.dumps(layer.get_config(), default=list))
    return {k: v for k, v in config.items() if k != "name"}


def _keras_config(key):
    return {k: v for k, v in KERAS_CONFIGS[key].items() if k != "name"}


@pytest.mark.parametrize("name", sorted(CONFIGS.CLAHE))
def test_clahe_matches_keras(name):
    kwargs, shape, dtype = CONFIGS.CLAHE[name]
    layer = keras.layers.ContrastLimitedAdaptiveHistogramEqualization(**kwargs)
    x = CONFIGS.images(shape, sorted(CONFIGS.CLAHE).index(name), dtype)
    if kwargs.get("value_range") == (0, 1):
        x = x / 255.0
    got = layer(x).numpy()
    want = KERAS[f"clahe/{name}"]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 if dtype == "float32" else 0)
    assert _config(layer) == _keras_config(f"clahe/{name}")
    again = keras.layers.ContrastLimitedAdaptiveHistogramEqualization.from_config(
        layer.get_config())
    np.testing.assert_array_equal(again(x).numpy(), got)


def test_clahe_against_a_numpy_float64_reference():
    """Each tile's clipped-histogram CDF, blended bilinearly between tile centres."""
    x = CONFIGS.images((1, 8, 8, 1), 3)
    got = keras.layers.ContrastLimitedAdaptiveHistogramEqualization(
        clip_limit=1.5, tile_grid_size=(2, 2))(x).numpy()[0, ..., 0]
    maps = np.zeros((4, 4, 256))           # the 2x2 tiles' maps, edge-padded to 4x4
    for i in range(2):
        for j in range(2):
            hist = np.bincount(x[0, 4 * i:4 * i + 4, 4 * j:4 * j + 4, 0].astype(int).ravel(),
                               minlength=256).astype(float)
            limit = 1.5 * 16 / 256
            clipped = np.minimum(hist, limit)
            cdf = np.cumsum(clipped + (hist - clipped).sum() / 256)
            maps[i + 1, j + 1] = np.clip((cdf - cdf.min()) * 255 / (16 - cdf.min()), 0, 255)
    maps[0], maps[3] = maps[1], maps[2]
    maps[:, 0], maps[:, 3] = maps[:, 1], maps[:, 2]
    want = np.zeros((8, 8))
    for r in range(8):
        for c in range(8):
            gy, gx = (r - 2) / 4 + 1, (c - 2) / 4 + 1
            y0, x0 = int(np.floor(gy)), int(np.floor(gx))
            wy, wx = gy - y0, gx - x0
            v = int(x[0, r, c, 0])
            want[r, c] = ((maps[y0, x0, v] * (1 - wx) + maps[y0, x0 + 1, v] * wx) * (1 - wy)
                          + (maps[y0 + 1, x0, v] * (1 - wx) + maps[y0 + 1, x0 + 1, v] * wx)
                          * wy)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)


def test_clahe_in_a_tf_function_with_an_unknown_batch():
    layer = keras.layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(3, 4))
    x = CONFIGS.images((2, 13, 17, 3), 1)
    fn = tf.function(layer, input_signature=[tf.TensorSpec([None, 13, 17, 3], tf.float32)])
    np.testing.assert_allclose(fn(x).numpy(), layer(x).numpy(), rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", sorted(CONFIGS.ELASTIC))
def test_seeded_elastic_transform_draws_what_keras_draws(name):
    kwargs, shape, calls = CONFIGS.ELASTIC[name]
    layer = keras.layers.RandomElasticTransform(**kwargs)
    x = CONFIGS.images(shape, 100 + sorted(CONFIGS.ELASTIC).index(name))
    for call in range(calls):
        np.testing.assert_allclose(layer(x, training=True).numpy(),
                                   KERAS[f"elastic/{name}/{call}"], rtol=0, atol=2e-3)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    assert _config(layer) == _keras_config(f"elastic/{name}")
    again = keras.layers.RandomElasticTransform.from_config(layer.get_config())
    np.testing.assert_allclose(again(x, training=True).numpy(), KERAS[f"elastic/{name}/0"],
                               rtol=0, atol=2e-3)


def test_seeded_elastic_transform_in_tf_function_and_tf_data_draws_what_keras_draws():
    kwargs, shape, _ = CONFIGS.ELASTIC["default"]
    x = CONFIGS.images(shape, 100 + sorted(CONFIGS.ELASTIC).index("default"))
    layer = keras.layers.RandomElasticTransform(**kwargs)
    fn = tf.function(lambda t: layer(t, training=True))
    for call in range(2):
        np.testing.assert_allclose(fn(x).numpy(), KERAS[f"elastic/default/{call}"], rtol=0,
                                   atol=2e-3)
    layer = keras.layers.RandomElasticTransform(**kwargs)
    ds = tf.data.Dataset.from_tensor_slices(np.concatenate([x, x])).batch(shape[0]).map(
        lambda t: layer(t, training=True))
    for call, batch in enumerate(ds):
        assert batch.shape == shape
        np.testing.assert_allclose(batch.numpy(), KERAS[f"elastic/default/{call}"], rtol=0,
                                   atol=2e-3)


def test_elastic_transform_dict_inputs_keep_labels_and_warp_masks_nearest():
    layer = keras.layers.RandomElasticTransform(seed=4)
    x = CONFIGS.images((2, 8, 8, 1), 5)
    masks = (x > 100).astype("float32")
    out = layer({"images": x, "labels": np.array([1, 2]), "segmentation_masks": masks},
                training=True)
    np.testing.assert_array_equal(out["labels"].numpy(), [1, 2])
    assert set(np.unique(out["segmentation_masks"].numpy())) <= {0.0, 1.0}
    assert not np.allclose(out["images"].numpy(), x)


def test_elastic_transform_errors_are_keras():
    with pytest.raises(NotImplementedError, match="Unknown `interpolation` bicubic"):
        keras.layers.RandomElasticTransform(interpolation="bicubic")
    with pytest.raises(NotImplementedError, match="Unknown `fill_mode` edge"):
        keras.layers.RandomElasticTransform(fill_mode="edge")
    with pytest.raises(ValueError, match=r"`scale` argument should be a number"):
        keras.layers.RandomElasticTransform(scale=1.5)


def _box_data(batched):
    data = {"images": CONFIGS.images((2, 4, 4, 3), 7),
            "bounding_boxes": {"boxes": CONFIGS.BOXES, "labels": CONFIGS.BOX_LABELS}}
    if not batched:
        data = {"images": data["images"][0],
                "bounding_boxes": {"boxes": CONFIGS.BOXES[0], "labels": CONFIGS.BOX_LABELS[0]}}
    return data


@pytest.mark.parametrize("name", sorted(CONFIGS.MAX_BOXES))
def test_max_num_bounding_boxes_matches_keras(name):
    kwargs, batched = CONFIGS.MAX_BOXES[name]
    layer = keras.layers.MaxNumBoundingBoxes(**kwargs)
    data = _box_data(batched)
    out = layer(data)
    for key in ("boxes", "labels"):
        got, want = out["bounding_boxes"][key].numpy(), KERAS[f"boxes/{name}/{key}"]
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out["images"].numpy(), data["images"])
    assert _config(layer) == _keras_config(f"boxes/{name}")
    assert keras.layers.MaxNumBoundingBoxes.from_config(layer.get_config()).max_number == \
        kwargs["max_number"]


def test_max_num_bounding_boxes_shapes_and_errors():
    layer = keras.layers.MaxNumBoundingBoxes(4, bounding_box_format="xyxy")
    x = CONFIGS.images((2, 4, 4, 3), 1)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    assert layer.compute_output_shape(
        {"images": (2, 4, 4, 3), "bounding_boxes": {"boxes": (2, 3, 4), "labels": (2, 3)}}) \
        == {"images": (2, 4, 4, 3), "bounding_boxes": {"boxes": [2, 4, 4], "labels": [2, 4]}}
    with pytest.raises(KeyError, match="unsupported keys"):
        layer.compute_output_shape({"bounding_boxes": {"boxes": (2, 3, 4), "labels": (2, 3),
                                                       "scores": (2, 3)}})
    with pytest.raises(ValueError, match="didn't specify a bounding box format"):
        keras.layers.MaxNumBoundingBoxes(4)(_box_data(True))
    with pytest.raises(ValueError, match="dict with keys 'boxes' and 'labels'"):
        layer({"images": x, "bounding_boxes": {"boxes": CONFIGS.BOXES}})

# TF tutorial "TFRecord and tf.train.Example": its output equals TF 2.21's.
# Adapted: two small JPEGs written by tf.io.encode_jpeg stand in for the downloaded cat and
# bridge photos; n_observations 1e3 (the tutorial's 1e4); `int(value)` in _int64_feature
# (the protobuf TF 2.21 installs refuses a bool in an Int64List: TF fails as ndflow does).
import numpy as np
import ndflow as tf


def _bytes_feature(value):
    """Returns a bytes_list from a string / byte."""
    if isinstance(value, type(tf.constant(0))):
        value = value.numpy()  # BytesList won't unpack a string from an EagerTensor.
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _float_feature(value):
    """Returns a float_list from a float / double."""
    return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))


def _int64_feature(value):
    """Returns an int64_list from a bool / enum / int / uint."""
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))


print(_bytes_feature(b'test_string'))
print(_bytes_feature(u'test_bytes'.encode('utf-8')))
print(_float_feature(np.exp(1)))
print(_int64_feature(True))
print(_int64_feature(1))
feature = _float_feature(np.exp(1))
print(feature.SerializeToString())

n_observations = int(1e3)
np.random.seed(0)
feature0 = np.random.choice([False, True], n_observations)
feature1 = np.random.randint(0, 5, n_observations)
strings = np.array([b'cat', b'dog', b'chicken', b'horse', b'goat'])
feature2 = strings[feature1]
feature3 = np.random.randn(n_observations)


def serialize_example(feature0, feature1, feature2, feature3):
    feature = {
        'feature0': _int64_feature(feature0),
        'feature1': _int64_feature(feature1),
        'feature2': _bytes_feature(feature2),
        'feature3': _float_feature(feature3),
    }
    example_proto = tf.train.Example(features=tf.train.Features(feature=feature))
    return example_proto.SerializeToString()


example_observation = []
serialized_example = serialize_example(False, 4, b'goat', 0.9876)
print(serialized_example)
example_proto = tf.train.Example.FromString(serialized_example)
print(example_proto)

print(tf.data.Dataset.from_tensor_slices(feature1))
features_dataset = tf.data.Dataset.from_tensor_slices((feature0, feature1, feature2, feature3))
print(features_dataset)
for f0, f1, f2, f3 in features_dataset.take(1):
    print(f0)
    print(f1)
    print(f2)
    print(f3)


def tf_serialize_example(f0, f1, f2, f3):
    tf_string = tf.py_function(
        serialize_example,
        (f0, f1, f2, f3),
        tf.string)
    return tf.reshape(tf_string, ())


print(tf_serialize_example(f0, f1, f2, f3))
serialized_features_dataset = features_dataset.map(tf_serialize_example)
print(serialized_features_dataset)


def generator():
    for features in features_dataset:
        yield serialize_example(*features)


serialized_features_dataset = tf.data.Dataset.from_generator(
    generator, output_types=tf.string, output_shapes=())
print(serialized_features_dataset)
filename = 'test.tfrecord'
writer = tf.data.experimental.TFRecordWriter(filename)
writer.write(serialized_features_dataset)

filenames = [filename]
raw_dataset = tf.data.TFRecordDataset(filenames)
print(raw_dataset)
for raw_record in raw_dataset.take(10):
    print(repr(raw_record))

feature_description = {
    'feature0': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'feature1': tf.io.FixedLenFeature([], tf.int64, default_value=0),
    'feature2': tf.io.FixedLenFeature([], tf.string, default_value=''),
    'feature3': tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
}


def _parse_function(example_proto):
    return tf.io.parse_single_example(example_proto, feature_description)


parsed_dataset = raw_dataset.map(_parse_function)
print(parsed_dataset)
for parsed_record in parsed_dataset.take(10):
    print(repr(parsed_record))

with tf.io.TFRecordWriter(filename) as writer:
    for i in range(n_observations):
        example = serialize_example(feature0[i], feature1[i], feature2[i], feature3[i])
        writer.write(example)
for raw_record in tf.data.TFRecordDataset(filenames).take(1):
    example = tf.train.Example()
    example.ParseFromString(raw_record.numpy())
    print(example)
result = {}
for key, feature in example.features.feature.items():
    kind = feature.WhichOneof('kind')
    result[key] = np.array(getattr(feature, kind).value)
print(sorted((k, v.tolist()) for k, v in result.items()))

y, x = np.mgrid[0:48, 0:64]
cat = np.stack([(x * 4) % 256, (y * 5) % 256, (x + y) % 256], -1).astype(np.uint8)
bridge = np.stack([(y * 3) % 256, (x * 2) % 256, (x * y) % 256], -1).astype(np.uint8)
image_labels = {'cat.jpg': 0, 'bridge.jpg': 1}
for name, pixels in (('cat.jpg', cat), ('bridge.jpg', bridge)):
    tf.io.write_file(name, tf.io.encode_jpeg(pixels, quality=90))
image_string = open('cat.jpg', 'rb').read()
label = image_labels['cat.jpg']


def image_example(image_string, label):
    image_shape = tf.io.decode_jpeg(image_string).shape
    feature = {
        'height': _int64_feature(image_shape[0]),
        'width': _int64_feature(image_shape[1]),
        'depth': _int64_feature(image_shape[2]),
        'label': _int64_feature(label),
        'image_raw': _bytes_feature(image_string),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


for line in str(image_example(image_string, label)).split('\n')[:15]:
    print(line)
print('...')
record_file = 'images.tfrecords'
with tf.io.TFRecordWriter(record_file) as writer:
    for filename, label in image_labels.items():
        image_string = open(filename, 'rb').read()
        tf_example = image_example(image_string, label)
        writer.write(tf_example.SerializeToString())
raw_image_dataset = tf.data.TFRecordDataset('images.tfrecords')
image_feature_description = {
    'height': tf.io.FixedLenFeature([], tf.int64),
    'width': tf.io.FixedLenFeature([], tf.int64),
    'depth': tf.io.FixedLenFeature([], tf.int64),
    'label': tf.io.FixedLenFeature([], tf.int64),
    'image_raw': tf.io.FixedLenFeature([], tf.string),
}


def _parse_image_function(example_proto):
    return tf.io.parse_single_example(example_proto, image_feature_description)


parsed_image_dataset = raw_image_dataset.map(_parse_image_function)
print(parsed_image_dataset)
for image_features in parsed_image_dataset:
    image_raw = image_features['image_raw'].numpy()
    decoded = tf.io.decode_jpeg(image_raw)
    print(decoded.shape, int(tf.reduce_sum(tf.cast(decoded, tf.int64))),
          image_features['label'].numpy())
print("tfrecord guide done")

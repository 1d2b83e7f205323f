# TF tutorials "Intro to Autoencoders", "Image segmentation" (U-Net on MobileNetV2) and the
# guides "Writing a training loop from scratch", "Customizing what happens in fit()",
# "Mixed precision" and "Training checkpoints".
# Adapted: small random arrays stand in for Fashion-MNIST, the ECG set and Oxford pets;
# weights=None for weights="imagenet" (offline); the autoencoder's Dense size is int(...)
# (Keras 3 rejects a NumPy integer there, as TF 2.21 does); sklearn's train_test_split is a
# stand-in defined here; a custom train_step's loss is a MeanSquaredError instance (TF 2.21's
# tf.keras.losses has no mean_squared_error); the second training loop gets its own optimizer
# and the checkpoint guide's Net is built before save_weights (Keras 3 requires both), its key
# is net/l1/_kernel as TF 2.21 writes it; fewer epochs and steps.
import numpy as np
import ndflow as tf
from ndflow.keras import layers, losses
from ndflow.keras.models import Model

rng = np.random.default_rng(0)

# -- Intro to Autoencoders: basic, denoising (conv) and anomaly detection ----------------------
x_train = rng.random((64, 28, 28)).astype('float32')
x_test = rng.random((16, 28, 28)).astype('float32')


class Autoencoder(Model):
    def __init__(self, latent_dim, shape):
        super(Autoencoder, self).__init__()
        self.latent_dim = latent_dim
        self.shape = shape
        self.encoder = tf.keras.Sequential([
            layers.Flatten(),
            layers.Dense(latent_dim, activation='relu'),
        ])
        self.decoder = tf.keras.Sequential([
            layers.Dense(int(tf.math.reduce_prod(shape).numpy()), activation='sigmoid'),
            layers.Reshape(shape)
        ])

    def call(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return decoded


shape = x_test.shape[1:]
latent_dim = 64
autoencoder = Autoencoder(latent_dim, shape)
autoencoder.compile(optimizer='adam', loss=losses.MeanSquaredError())
autoencoder.fit(x_train, x_train, epochs=2, shuffle=True, validation_data=(x_test, x_test),
                verbose=2)
encoded_imgs = autoencoder.encoder(x_test).numpy()
decoded_imgs = autoencoder.decoder(encoded_imgs).numpy()
print("decoded", decoded_imgs.shape)

x_train = x_train[..., tf.newaxis]
x_test = x_test[..., tf.newaxis]
noise_factor = 0.2
x_train_noisy = x_train + noise_factor * tf.random.normal(shape=x_train.shape)
x_test_noisy = x_test + noise_factor * tf.random.normal(shape=x_test.shape)
x_train_noisy = tf.clip_by_value(x_train_noisy, clip_value_min=0., clip_value_max=1.)
x_test_noisy = tf.clip_by_value(x_test_noisy, clip_value_min=0., clip_value_max=1.)


class Denoise(Model):
    def __init__(self):
        super(Denoise, self).__init__()
        self.encoder = tf.keras.Sequential([
            layers.Input(shape=(28, 28, 1)),
            layers.Conv2D(16, (3, 3), activation='relu', padding='same', strides=2),
            layers.Conv2D(8, (3, 3), activation='relu', padding='same', strides=2)])
        self.decoder = tf.keras.Sequential([
            layers.Conv2DTranspose(8, kernel_size=3, strides=2, activation='relu', padding='same'),
            layers.Conv2DTranspose(16, kernel_size=3, strides=2, activation='relu', padding='same'),
            layers.Conv2D(1, kernel_size=(3, 3), activation='sigmoid', padding='same')])

    def call(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return decoded


autoencoder = Denoise()
autoencoder.compile(optimizer='adam', loss=losses.MeanSquaredError())
autoencoder.fit(x_train_noisy, x_train, epochs=2, shuffle=True,
                validation_data=(x_test_noisy, x_test), verbose=2)
autoencoder.encoder.summary()
autoencoder.decoder.summary()
encoded_imgs = autoencoder.encoder(x_test_noisy).numpy()
decoded_imgs = autoencoder.decoder(encoded_imgs).numpy()
print("denoised", decoded_imgs.shape)

# anomaly detection on ECG-like rows
raw_data = rng.random((100, 141))
labels = raw_data[:, -1] > 0.3
data = raw_data[:, 0:-1]


def train_test_split(*arrays, test_size, random_state):  # sklearn's, which is not installed
    order = np.random.default_rng(random_state).permutation(len(arrays[0]))
    cut = len(order) - int(np.ceil(test_size * len(order)))
    return [part for a in arrays for part in (a[order[:cut]], a[order[cut:]])]


train_data, test_data, train_labels, test_labels = train_test_split(data, labels, test_size=0.2,
                                                                    random_state=21)
min_val = tf.reduce_min(train_data)
max_val = tf.reduce_max(train_data)
train_data = (train_data - min_val) / (max_val - min_val)
test_data = (test_data - min_val) / (max_val - min_val)
train_data = tf.cast(train_data, tf.float32)
test_data = tf.cast(test_data, tf.float32)
train_labels = train_labels.astype(bool)
test_labels = test_labels.astype(bool)
normal_train_data = train_data[train_labels]
normal_test_data = test_data[test_labels]
anomalous_test_data = test_data[~test_labels]


class AnomalyDetector(Model):
    def __init__(self):
        super(AnomalyDetector, self).__init__()
        self.encoder = tf.keras.Sequential([
            layers.Dense(32, activation="relu"),
            layers.Dense(16, activation="relu"),
            layers.Dense(8, activation="relu")])
        self.decoder = tf.keras.Sequential([
            layers.Dense(16, activation="relu"),
            layers.Dense(32, activation="relu"),
            layers.Dense(140, activation="sigmoid")])

    def call(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return decoded


autoencoder = AnomalyDetector()
autoencoder.compile(optimizer='adam', loss='mae')
history = autoencoder.fit(normal_train_data, normal_train_data, epochs=2, batch_size=512,
                          validation_data=(test_data, test_data), shuffle=True, verbose=0)
reconstructions = autoencoder.predict(normal_train_data, verbose=0)
train_loss = tf.keras.losses.mae(reconstructions, normal_train_data)
threshold = np.mean(train_loss) + np.std(train_loss)
print("Threshold: ", threshold)


def predict(model, data, threshold):
    reconstructions = model(data)
    loss = tf.keras.losses.mae(reconstructions, data)
    return tf.math.less(loss, threshold)


preds = predict(autoencoder, test_data, threshold)
print("Accuracy = {:.3f}".format(float(np.mean(preds.numpy() == test_labels))))

# -- Image segmentation: U-Net with a MobileNetV2 encoder and pix2pix upsampling -----------------
images = rng.random((8, 64, 64, 3)).astype('float32')
masks = rng.integers(0, 3, (8, 64, 64, 1)).astype('float32')
train_images = tf.data.Dataset.from_tensor_slices((images, masks))


class Augment(tf.keras.layers.Layer):
    def __init__(self, seed=42):
        super().__init__()
        self.augment_inputs = tf.keras.layers.RandomFlip(mode="horizontal", seed=seed)
        self.augment_labels = tf.keras.layers.RandomFlip(mode="horizontal", seed=seed)

    def call(self, inputs, labels):
        inputs = self.augment_inputs(inputs)
        labels = self.augment_labels(labels)
        return inputs, labels


BATCH_SIZE = 4
BUFFER_SIZE = 8
train_batches = (train_images.cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE).repeat()
                 .map(Augment()).prefetch(buffer_size=tf.data.AUTOTUNE))
test_batches = train_images.batch(BATCH_SIZE)
base_model = tf.keras.applications.MobileNetV2(input_shape=[64, 64, 3], include_top=False,
                                               weights=None)
layer_names = [
    'block_1_expand_relu',   # 32x32
    'block_3_expand_relu',   # 16x16
    'block_6_expand_relu',   # 8x8
    'block_13_expand_relu',  # 4x4
    'block_16_project',      # 2x2
]
base_model_outputs = [base_model.get_layer(name).output for name in layer_names]
down_stack = tf.keras.Model(inputs=base_model.input, outputs=base_model_outputs)
down_stack.trainable = False


def upsample(filters, size, apply_dropout=False):  # pix2pix.upsample
    initializer = tf.random_normal_initializer(0., 0.02)
    result = tf.keras.Sequential()
    result.add(tf.keras.layers.Conv2DTranspose(filters, size, strides=2, padding='same',
                                               kernel_initializer=initializer, use_bias=False))
    result.add(tf.keras.layers.BatchNormalization())
    if apply_dropout:
        result.add(tf.keras.layers.Dropout(0.5))
    result.add(tf.keras.layers.ReLU())
    return result


up_stack = [upsample(512, 3), upsample(256, 3), upsample(128, 3), upsample(64, 3)]


def unet_model(output_channels: int):
    inputs = tf.keras.layers.Input(shape=[64, 64, 3])
    skips = down_stack(inputs)
    x = skips[-1]
    skips = reversed(skips[:-1])
    for up, skip in zip(up_stack, skips):
        x = up(x)
        concat = tf.keras.layers.Concatenate()
        x = concat([x, skip])
    last = tf.keras.layers.Conv2DTranspose(filters=output_channels, kernel_size=3, strides=2,
                                           padding='same')  # 32x32 -> 64x64
    x = last(x)
    return tf.keras.Model(inputs=inputs, outputs=x)


OUTPUT_CLASSES = 3
model = unet_model(output_channels=OUTPUT_CLASSES)
model.compile(optimizer='adam',
              loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=['accuracy'])


def create_mask(pred_mask):
    pred_mask = tf.math.argmax(pred_mask, axis=-1)
    pred_mask = pred_mask[..., tf.newaxis]
    return pred_mask[0]


model_history = model.fit(train_batches, epochs=1, steps_per_epoch=2, validation_steps=1,
                          validation_data=test_batches, verbose=2)
for image, mask in test_batches.take(1):
    pred_mask = model.predict(image, verbose=0)
    print("mask", create_mask(pred_mask).shape)


def add_sample_weights(image, label):
    class_weights = tf.constant([2.0, 2.0, 1.0])
    class_weights = class_weights / tf.reduce_sum(class_weights)
    sample_weights = tf.gather(class_weights, indices=tf.cast(label, tf.int32))
    return image, label, sample_weights


weighted = train_batches.map(add_sample_weights)
print("weighted", weighted.element_spec[2].shape)
model.fit(weighted, epochs=1, steps_per_epoch=1, verbose=0)

# -- Writing a training loop from scratch --------------------------------------------------------
inputs = tf.keras.Input(shape=(784,), name="digits")
x1 = tf.keras.layers.Dense(64, activation="relu")(inputs)
x2 = tf.keras.layers.Dense(64, activation="relu")(x1)
outputs = tf.keras.layers.Dense(10, name="predictions")(x2)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
optimizer = tf.keras.optimizers.SGD(learning_rate=1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
batch_size = 32
x_train = rng.random((256, 784)).astype("float32")
y_train = rng.integers(0, 10, 256)
x_val, y_val = x_train[-64:], y_train[-64:]
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
train_dataset = train_dataset.shuffle(buffer_size=1024).batch(batch_size)
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size)
train_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()
val_acc_metric = tf.keras.metrics.SparseCategoricalAccuracy()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc_metric.update_state(y, logits)
    return loss_value


@tf.function
def test_step(x, y):
    val_logits = model(x, training=False)
    val_acc_metric.update_state(y, val_logits)


import time  # noqa: E402
for epoch in range(2):
    print("\nStart of epoch %d" % (epoch,))
    start_time = time.time()
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        loss_value = train_step(x_batch_train, y_batch_train)
        if step % 4 == 0:
            print("Training loss (for one batch) at step %d: %.4f" % (step, float(loss_value)))
    train_acc = train_acc_metric.result()
    print("Training acc over epoch: %.4f" % (float(train_acc),))
    train_acc_metric.reset_state()
    for x_batch_val, y_batch_val in val_dataset:
        test_step(x_batch_val, y_batch_val)
    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print("Validation acc: %.4f" % (float(val_acc),))
    print("Time taken: %.2fs" % (time.time() - start_time))


class ActivityRegularizationLayer(tf.keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * tf.reduce_sum(inputs))
        return inputs


inputs = tf.keras.Input(shape=(784,), name="digits")
x = tf.keras.layers.Dense(64, activation="relu")(inputs)
x = ActivityRegularizationLayer()(x)
x = tf.keras.layers.Dense(64, activation="relu")(x)
outputs = tf.keras.layers.Dense(10, name="predictions")(x)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
optimizer = tf.keras.optimizers.SGD(learning_rate=1e-3)  # new variables: a new optimizer


@tf.function
def train_step_with_losses(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
        loss_value += sum(model.losses)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    return loss_value


print("with activity loss", float(train_step_with_losses(x_train[:32], y_train[:32])) > 0)

# -- Customizing what happens in fit() -----------------------------------------------------------
class CustomModel(tf.keras.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = tf.keras.metrics.Mean(name="loss")
        self.mae_metric = tf.keras.metrics.MeanAbsoluteError(name="mae")
        self.loss_fn = tf.keras.losses.MeanSquaredError()

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.loss_fn(y, y_pred)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.loss_tracker.update_state(self.loss_fn(y, y_pred))
        self.mae_metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


inputs = tf.keras.Input(shape=(32,))
outputs = tf.keras.layers.Dense(1)(inputs)
model = CustomModel(inputs, outputs)
model.compile(optimizer="adam")
x = rng.random((100, 32))
y = rng.random((100, 1))
model.fit(x, y, epochs=2, verbose=2)
print("evaluate", model.evaluate(x, y, verbose=0, return_dict=True))


class WeightedModel(tf.keras.Model):
    def train_step(self, data):
        if len(data) == 3:
            x, y, sample_weight = data
        else:
            sample_weight = None
            x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)
        return {m.name: m.result() for m in self.metrics}


inputs = tf.keras.Input(shape=(32,))
outputs = tf.keras.layers.Dense(1)(inputs)
model = WeightedModel(inputs, outputs)
model.compile(optimizer="adam", loss="mse", metrics=["mae"])
sw = rng.random((100, 1))
model.fit(x, y, sample_weight=sw, epochs=2, verbose=2)

# -- Mixed precision guide (on the CPU: the policy works; speed needs bf16/fp16 units) ----------
from ndflow.keras import mixed_precision  # noqa: E402
mixed_precision.set_global_policy('mixed_float16')
inputs = tf.keras.Input(shape=(784,), name='digits')
dense1 = layers.Dense(64, activation='relu', name='dense_1')
x = dense1(inputs)
print('x.dtype: %s' % x.dtype.name)
print('dense1.kernel.dtype: %s' % dense1.kernel.dtype.name)
x = layers.Dense(10, name='dense_logits')(x)
outputs = layers.Activation('softmax', dtype='float32', name='predictions')(x)
print('Outputs dtype: %s' % outputs.dtype.name)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
model.compile(loss='sparse_categorical_crossentropy', optimizer=tf.keras.optimizers.RMSprop(),
              metrics=['accuracy'])
history = model.fit(x_train, y_train, batch_size=64, epochs=1, validation_split=0.2, verbose=2)
optimizer = tf.keras.optimizers.RMSprop()
optimizer = mixed_precision.LossScaleOptimizer(optimizer)
loss_object = tf.keras.losses.SparseCategoricalCrossentropy()


@tf.function
def mp_train_step(x, y):
    with tf.GradientTape() as tape:
        predictions = model(x)
        loss = loss_object(y, predictions)
        scaled_loss = optimizer.scale_loss(loss)
    scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
    optimizer.apply_gradients(zip(scaled_gradients, model.trainable_variables))
    return loss


print("mixed precision loss", float(mp_train_step(x_train[:64], y_train[:64])) > 0)
mixed_precision.set_global_policy('float32')

# -- Training checkpoints guide -------------------------------------------------------------------
class Net(tf.keras.Model):
    def __init__(self):
        super(Net, self).__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


net = Net()
net(tf.ones((1, 1)))  # Keras 3 saves built models only, to .weights.h5 files
net.save_weights('easy_checkpoint.weights.h5')


def toy_dataset():
    inputs = tf.range(10.)[:, None]
    labels = inputs * 5. + tf.range(5.)[None, :]
    return tf.data.Dataset.from_tensor_slices(dict(x=inputs, y=labels)).repeat().batch(2)


def train_step(net, example, optimizer):
    with tf.GradientTape() as tape:
        output = net(example['x'])
        loss = tf.reduce_mean(tf.abs(output - example['y']))
    variables = net.trainable_variables
    gradients = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(gradients, variables))
    return loss


opt = tf.keras.optimizers.Adam(0.1)
dataset = toy_dataset()
iterator = iter(dataset)
ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net, iterator=iterator)
manager = tf.train.CheckpointManager(ckpt, './tf_ckpts', max_to_keep=3)


def train_and_checkpoint(net, manager):
    ckpt.restore(manager.latest_checkpoint)
    if manager.latest_checkpoint:
        print("Restored from {}".format(manager.latest_checkpoint))
    else:
        print("Initializing from scratch.")
    for _ in range(50):
        example = next(iterator)
        loss = train_step(net, example, opt)
        ckpt.step.assign_add(1)
        if int(ckpt.step) % 10 == 0:
            save_path = manager.save()
            print("Saved checkpoint for step {}: {}".format(int(ckpt.step), save_path))
            print("loss {:1.2f}".format(loss.numpy()))


train_and_checkpoint(net, manager)
opt = tf.keras.optimizers.Adam(0.1)
net = Net()
dataset = toy_dataset()
iterator = iter(dataset)
ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net, iterator=iterator)
manager = tf.train.CheckpointManager(ckpt, './tf_ckpts', max_to_keep=3)
train_and_checkpoint(net, manager)
print(manager.checkpoints)
to_restore = tf.Variable(tf.zeros([5]))
print(to_restore.numpy())
fake_layer = tf.train.Checkpoint(bias=to_restore)
fake_net = tf.train.Checkpoint(l1=fake_layer)
new_root = tf.train.Checkpoint(net=fake_net)
status = new_root.restore(tf.train.latest_checkpoint('./tf_ckpts/'))
print(to_restore.numpy())
status.assert_existing_objects_matched()
reader = tf.train.load_checkpoint('./tf_ckpts/')
shape_from_key = reader.get_variable_to_shape_map()
dtype_from_key = reader.get_variable_to_dtype_map()
print(sorted(shape_from_key.keys())[:3])
key = 'net/l1/_kernel/.ATTRIBUTES/VARIABLE_VALUE'  # Keras 3's Dense keeps it as _kernel
print("Shape:", shape_from_key[key])
print("Dtype:", dtype_from_key[key].name)
print(reader.get_tensor(key).shape)

# TF tutorials "Text classification with an RNN", "Neural machine translation with attention",
# "pix2pix" and the guide "Introduction to modules, layers, and models".
# Adapted: small generated sentences stand in for IMDB and the Spanish-English pairs, random
# images for the facades; predict's texts are tf.constant (Keras 3, so TF 2.21, refuses NumPy
# str_ arrays: 'Invalid dtype: str...', TF issue 65237); the decoder's GRU gets its initial state
# from the batch size (Keras 3's get_initial_state; TF 2.21 fails on the tutorial's tensor);
# the masked_acc/masked_loss metrics are left out of compile (with the logits' Keras mask, TF
# 2.21 fails broadcasting it to their scalar values: 'Shape must be at most rank 0');
# the modules guide calls layers on tensors, not nested lists, and reads no `submodules` of a
# Keras model (Keras 3 refuses both), and does not reload its .keras file (its layers make raw
# tf.Variables in build: TF 2.21 rebuilds them in a discarded scratch graph, ndflow refuses);
# fewer epochs, steps and units.
import numpy as np
import ndflow as tf

rng = np.random.default_rng(3)
words = ["good", "bad", "movie", "great", "awful", "plot", "acting", "fun", "boring", "the"]

# -- Text classification with an RNN -----------------------------------------------------------
texts = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(64)]
labels = np.array([int("good" in t or "great" in t) for t in texts])
train_dataset = tf.data.Dataset.from_tensor_slices((texts, labels))
BUFFER_SIZE, BATCH_SIZE = 64, 16
train_dataset = train_dataset.shuffle(BUFFER_SIZE).batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)
test_dataset = train_dataset.take(1)
for example, label in train_dataset.take(1):
    print('texts: ', example.numpy()[:3])
    print('labels: ', label.numpy()[:3])
VOCAB_SIZE = 1000
encoder = tf.keras.layers.TextVectorization(max_tokens=VOCAB_SIZE)
encoder.adapt(train_dataset.map(lambda text, label: text))
vocab = np.array(encoder.get_vocabulary())
print(vocab[:20])
encoded_example = encoder(example)[:3].numpy()
print(encoded_example)
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Embedding(input_dim=len(encoder.get_vocabulary()), output_dim=16,
                              mask_zero=True),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(16)),
    tf.keras.layers.Dense(16, activation='relu'),
    tf.keras.layers.Dense(1)
])
print([layer.supports_masking for layer in model.layers])
sample_text = ('The movie was cool. The animation and the graphics were out of this world. '
               'I would recommend this movie.')
predictions = model.predict(tf.constant([sample_text]), verbose=0)
print(predictions[0])
padding = "the " * 200
predictions = model.predict(tf.constant([sample_text, padding]), verbose=0)
print(predictions[0])
model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.Adam(1e-4), metrics=['accuracy'])
history = model.fit(train_dataset, epochs=2, validation_data=test_dataset, validation_steps=1,
                    verbose=2)
test_loss, test_acc = model.evaluate(test_dataset, verbose=0)
print('Test Loss:', test_loss)
print('Test Accuracy:', test_acc)
model = tf.keras.Sequential([
    encoder,
    tf.keras.layers.Embedding(len(encoder.get_vocabulary()), 16, mask_zero=True),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(16, return_sequences=True)),
    tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(8)),
    tf.keras.layers.Dense(16, activation='relu'),
    tf.keras.layers.Dropout(0.5),
    tf.keras.layers.Dense(1)
])
model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.Adam(1e-4), metrics=['accuracy'])
history = model.fit(train_dataset, epochs=1, validation_data=test_dataset, validation_steps=1,
                    verbose=2)
predictions = model.predict(tf.constant([sample_text]), verbose=0)
print("stacked", predictions.shape)

# -- Neural machine translation with attention -------------------------------------------------
es = ["hola", "casa", "perro", "gato", "grande", "pequeño", "el", "la", "es", "¿dónde?"]
en = ["hello", "house", "dog", "cat", "big", "small", "the", "the", "is", "where?"]
pairs = [rng.integers(0, 10, rng.integers(2, 6)) for _ in range(48)]
context_raw = np.array([" ".join(es[i] for i in p) for p in pairs])
target_raw = np.array([" ".join(en[i] for i in p) for p in pairs])
BUFFER_SIZE = len(context_raw)
BATCH_SIZE = 8
is_train = np.random.uniform(size=(len(target_raw),)) < 0.8
train_raw = (tf.data.Dataset.from_tensor_slices((context_raw[is_train], target_raw[is_train]))
             .shuffle(BUFFER_SIZE).batch(BATCH_SIZE))
val_raw = (tf.data.Dataset.from_tensor_slices((context_raw[~is_train], target_raw[~is_train]))
           .shuffle(BUFFER_SIZE).batch(BATCH_SIZE))


def tf_lower_and_split_punct(text):
    # The tutorial first applies tf_text.normalize_utf8(text, 'NFKD') (tensorflow_text)
    text = tf.strings.lower(text)
    text = tf.strings.regex_replace(text, '[^ a-z.?!,¿]', '')
    text = tf.strings.regex_replace(text, '[.?!,¿]', r' \0 ')
    text = tf.strings.strip(text)
    text = tf.strings.join(['[START]', text, '[END]'], separator=' ')
    return text


example_text = tf.constant('¿Todavía está en casa?')
print(example_text.numpy().decode())
print(tf_lower_and_split_punct(example_text).numpy().decode())
max_vocab_size = 5000
context_text_processor = tf.keras.layers.TextVectorization(
    standardize=tf_lower_and_split_punct, max_tokens=max_vocab_size, ragged=True)
context_text_processor.adapt(train_raw.map(lambda context, target: context))
print(context_text_processor.get_vocabulary()[:10])
target_text_processor = tf.keras.layers.TextVectorization(
    standardize=tf_lower_and_split_punct, max_tokens=max_vocab_size, ragged=True)
target_text_processor.adapt(train_raw.map(lambda context, target: target))
for example_context_strings, example_target_strings in train_raw.take(1):
    example_tokens = context_text_processor(example_context_strings)
    print(example_tokens[:3, :])
context_vocab = np.array(context_text_processor.get_vocabulary())
tokens = context_vocab[example_tokens[0].numpy()]
print(' '.join(tokens))


def process_text(context, target):
    context = context_text_processor(context).to_tensor()
    target = target_text_processor(target)
    targ_in = target[:, :-1].to_tensor()
    targ_out = target[:, 1:].to_tensor()
    return (context, targ_in), targ_out


train_ds = train_raw.map(process_text, tf.data.AUTOTUNE)
val_ds = val_raw.map(process_text, tf.data.AUTOTUNE)
for (ex_context_tok, ex_tar_in), ex_tar_out in train_ds.take(1):
    print(ex_context_tok[0, :10].numpy())
    print(ex_tar_in[0, :10].numpy())
    print(ex_tar_out[0, :10].numpy())
UNITS = 32


class Encoder(tf.keras.layers.Layer):
    def __init__(self, text_processor, units):
        super(Encoder, self).__init__()
        self.text_processor = text_processor
        self.vocab_size = text_processor.vocabulary_size()
        self.units = units
        self.embedding = tf.keras.layers.Embedding(self.vocab_size, units, mask_zero=True)
        self.rnn = tf.keras.layers.Bidirectional(
            merge_mode='sum',
            layer=tf.keras.layers.GRU(units, return_sequences=True,
                                      recurrent_initializer='glorot_uniform'))

    def call(self, x):
        x = self.embedding(x)
        x = self.rnn(x)
        return x

    def convert_input(self, texts):
        texts = tf.convert_to_tensor(texts)
        if len(texts.shape) == 0:
            texts = tf.convert_to_tensor(texts)[tf.newaxis]
        context = self.text_processor(texts).to_tensor()
        context = self(context)
        return context


encoder = Encoder(context_text_processor, UNITS)
ex_context = encoder(ex_context_tok)
print(f'Context tokens, shape (batch, s): {ex_context_tok.shape}')
print(f'Encoder output, shape (batch, s, units): {ex_context.shape}')


class CrossAttention(tf.keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__()
        self.mha = tf.keras.layers.MultiHeadAttention(key_dim=units, num_heads=1, **kwargs)
        self.layernorm = tf.keras.layers.LayerNormalization()
        self.add = tf.keras.layers.Add()

    def call(self, x, context):
        attn_output, attn_scores = self.mha(query=x, value=context,
                                            return_attention_scores=True)
        attn_scores = tf.reduce_mean(attn_scores, axis=1)
        self.last_attention_weights = attn_scores
        x = self.add([x, attn_output])
        x = self.layernorm(x)
        return x


attention_layer = CrossAttention(UNITS)
embed = tf.keras.layers.Embedding(target_text_processor.vocabulary_size(), output_dim=UNITS,
                                  mask_zero=True)
ex_tar_embed = embed(ex_tar_in)
result = attention_layer(ex_tar_embed, ex_context)
print(f'Attention result, shape (batch, t, units): {result.shape}')
print(f'Attention weights, shape (batch, t, s):    '
      f'{attention_layer.last_attention_weights.shape}')
print(attention_layer.last_attention_weights[0].numpy().sum(axis=-1)[:4])


class Decoder(tf.keras.layers.Layer):
    def __init__(self, text_processor, units):
        super(Decoder, self).__init__()
        self.text_processor = text_processor
        self.vocab_size = text_processor.vocabulary_size()
        self.word_to_id = tf.keras.layers.StringLookup(
            vocabulary=text_processor.get_vocabulary(), mask_token='', oov_token='[UNK]')
        self.id_to_word = tf.keras.layers.StringLookup(
            vocabulary=text_processor.get_vocabulary(), mask_token='', oov_token='[UNK]',
            invert=True)
        self.start_token = self.word_to_id('[START]')
        self.end_token = self.word_to_id('[END]')
        self.units = units
        self.embedding = tf.keras.layers.Embedding(self.vocab_size, units, mask_zero=True)
        self.rnn = tf.keras.layers.GRU(units, return_sequences=True, return_state=True,
                                       recurrent_initializer='glorot_uniform')
        self.attention = CrossAttention(units)
        self.output_layer = tf.keras.layers.Dense(self.vocab_size)

    def call(self, context, x, state=None, return_state=False):
        x = self.embedding(x)
        x, state = self.rnn(x, initial_state=state)
        x = self.attention(x, context)
        self.last_attention_weights = self.attention.last_attention_weights
        logits = self.output_layer(x)
        if return_state:
            return logits, state
        else:
            return logits

    def get_initial_state(self, context):
        batch_size = tf.shape(context)[0]
        start_tokens = tf.fill([batch_size, 1], self.start_token)
        done = tf.zeros([batch_size, 1], dtype=tf.bool)
        embedded = self.embedding(start_tokens)
        return start_tokens, done, self.rnn.get_initial_state(batch_size)  # Keras 3: a size

    def tokens_to_text(self, tokens):
        words = self.id_to_word(tokens)
        result = tf.strings.reduce_join(words, axis=-1, separator=' ')
        result = tf.strings.regex_replace(result, '^ *\\[START\\] *', '')
        result = tf.strings.regex_replace(result, ' *\\[END\\] *$', '')
        return result

    def get_next_token(self, context, next_token, done, state, temperature=0.0):
        logits, state = self(context, next_token, state=state, return_state=True)
        if temperature == 0.0:
            next_token = tf.argmax(logits, axis=-1)
        else:
            logits = logits[:, -1, :] / temperature
            next_token = tf.random.categorical(logits, num_samples=1)
        done = done | (next_token == self.end_token)
        next_token = tf.where(done, tf.constant(0, dtype=tf.int64), next_token)
        return next_token, done, state


decoder = Decoder(target_text_processor, UNITS)
logits = decoder(ex_context, ex_tar_in)
print(f'logits shape: (batch, target_vocabulary_size) {logits.shape}')
next_token, done, state = decoder.get_initial_state(ex_context)
tokens = []
for n in range(4):
    next_token, done, state = decoder.get_next_token(ex_context, next_token, done, state,
                                                     temperature=1.0)
    tokens.append(next_token)
tokens = tf.concat(tokens, axis=-1)
result = decoder.tokens_to_text(tokens)
print("untrained", result[:3].numpy().shape)


class Translator(tf.keras.Model):
    def __init__(self, units, context_text_processor, target_text_processor):
        super().__init__()
        encoder = Encoder(context_text_processor, units)
        decoder = Decoder(target_text_processor, units)
        self.encoder = encoder
        self.decoder = decoder

    def call(self, inputs):
        context, x = inputs
        context = self.encoder(context)
        logits = self.decoder(context, x)
        return logits


model = Translator(UNITS, context_text_processor, target_text_processor)
logits = model((ex_context_tok, ex_tar_in))
print(f'Target tokens, shape: (batch, t) {ex_tar_in.shape}')
print(f'logits, shape: (batch, t, target_vocabulary_size) {logits.shape}')


def masked_loss(y_true, y_pred):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction='none')
    loss = loss_fn(y_true, y_pred)
    mask = tf.cast(y_true != 0, loss.dtype)
    loss *= mask
    return tf.reduce_sum(loss) / tf.reduce_sum(mask)


def masked_acc(y_true, y_pred):
    y_pred = tf.argmax(y_pred, axis=-1)
    y_pred = tf.cast(y_pred, y_true.dtype)
    match = tf.cast(y_true == y_pred, tf.float32)
    mask = tf.cast(y_true != 0, tf.float32)
    return tf.reduce_sum(match) / tf.reduce_sum(mask)


model.compile(optimizer='adam', loss=masked_loss)
vocab_size = 1.0 * target_text_processor.vocabulary_size()
print({"expected_loss": tf.math.log(vocab_size).numpy(), "expected_acc": 1 / vocab_size})
model.evaluate(val_ds, steps=1, return_dict=True, verbose=0)
history = model.fit(train_ds.repeat(), epochs=2, steps_per_epoch=3, validation_data=val_ds,
                    validation_steps=1, verbose=2)


def translate(self, texts, *, max_length=8, temperature=0.0):
    context = self.encoder.convert_input(texts)
    batch_size = tf.shape(texts)[0]
    tokens = []
    attention_weights = []
    next_token, done, state = self.decoder.get_initial_state(context)
    for _ in range(max_length):
        next_token, done, state = self.decoder.get_next_token(context, next_token, done, state,
                                                              temperature)
        tokens.append(next_token)
        attention_weights.append(self.decoder.last_attention_weights)
        if tf.executing_eagerly() and tf.reduce_all(done):
            break
    tokens = tf.concat(tokens, axis=-1)
    self.last_attention_weights = tf.concat(attention_weights, axis=1)
    result = self.decoder.tokens_to_text(tokens)
    return result


Translator.translate = translate
result = model.translate(['¿Todavía está en casa?'])
print("translation", result[0].numpy().decode() is not None)
inputs = ['hola casa', 'el perro es grande', 'la gato']
for t in inputs:
    print(model.translate([t])[0].numpy().decode())


class Export(tf.Module):
    def __init__(self, model):
        self.model = model

    @tf.function(input_signature=[tf.TensorSpec(dtype=tf.string, shape=[None])])
    def translate(self, inputs):
        return self.model.translate(inputs)


export = Export(model)
_ = export.translate(tf.constant(inputs))
tf.saved_model.save(export, 'translator', signatures={'serving_default': export.translate})
reloaded = tf.saved_model.load('translator')
result = reloaded.translate(tf.constant(inputs))
print("reloaded", result.shape)

# -- pix2pix ---------------------------------------------------------------------------------------
OUTPUT_CHANNELS = 3
IMG = 32


def downsample(filters, size, apply_batchnorm=True):
    initializer = tf.random_normal_initializer(0., 0.02)
    result = tf.keras.Sequential()
    result.add(tf.keras.layers.Conv2D(filters, size, strides=2, padding='same',
                                      kernel_initializer=initializer, use_bias=False))
    if apply_batchnorm:
        result.add(tf.keras.layers.BatchNormalization())
    result.add(tf.keras.layers.LeakyReLU())
    return result


def upsample(filters, size, apply_dropout=False):
    initializer = tf.random_normal_initializer(0., 0.02)
    result = tf.keras.Sequential()
    result.add(tf.keras.layers.Conv2DTranspose(filters, size, strides=2, padding='same',
                                               kernel_initializer=initializer, use_bias=False))
    result.add(tf.keras.layers.BatchNormalization())
    if apply_dropout:
        result.add(tf.keras.layers.Dropout(0.5))
    result.add(tf.keras.layers.ReLU())
    return result


def Generator():
    inputs = tf.keras.layers.Input(shape=[IMG, IMG, 3])
    down_stack = [downsample(16, 4, apply_batchnorm=False), downsample(32, 4), downsample(64, 4),
                  downsample(64, 4), downsample(64, 4)]
    up_stack = [upsample(64, 4, apply_dropout=True), upsample(64, 4, apply_dropout=True),
                upsample(32, 4), upsample(16, 4)]
    initializer = tf.random_normal_initializer(0., 0.02)
    last = tf.keras.layers.Conv2DTranspose(OUTPUT_CHANNELS, 4, strides=2, padding='same',
                                           kernel_initializer=initializer, activation='tanh')
    x = inputs
    skips = []
    for down in down_stack:
        x = down(x)
        skips.append(x)
    skips = reversed(skips[:-1])
    for up, skip in zip(up_stack, skips):
        x = up(x)
        x = tf.keras.layers.Concatenate()([x, skip])
    x = last(x)
    return tf.keras.Model(inputs=inputs, outputs=x)


generator = Generator()
inp = tf.constant(rng.uniform(-1, 1, (1, IMG, IMG, 3)).astype("float32"))
gen_output = generator(inp, training=False)
print("generator", gen_output.shape)
LAMBDA = 100
loss_object = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def generator_loss(disc_generated_output, gen_output, target):
    gan_loss = loss_object(tf.ones_like(disc_generated_output), disc_generated_output)
    l1_loss = tf.reduce_mean(tf.abs(target - gen_output))
    total_gen_loss = gan_loss + (LAMBDA * l1_loss)
    return total_gen_loss, gan_loss, l1_loss


def Discriminator():
    initializer = tf.random_normal_initializer(0., 0.02)
    inp = tf.keras.layers.Input(shape=[IMG, IMG, 3], name='input_image')
    tar = tf.keras.layers.Input(shape=[IMG, IMG, 3], name='target_image')
    x = tf.keras.layers.concatenate([inp, tar])
    down1 = downsample(16, 4, False)(x)
    down2 = downsample(32, 4)(down1)
    zero_pad1 = tf.keras.layers.ZeroPadding2D()(down2)
    conv = tf.keras.layers.Conv2D(64, 4, strides=1, kernel_initializer=initializer,
                                  use_bias=False)(zero_pad1)
    batchnorm1 = tf.keras.layers.BatchNormalization()(conv)
    leaky_relu = tf.keras.layers.LeakyReLU()(batchnorm1)
    zero_pad2 = tf.keras.layers.ZeroPadding2D()(leaky_relu)
    last = tf.keras.layers.Conv2D(1, 4, strides=1, kernel_initializer=initializer)(zero_pad2)
    return tf.keras.Model(inputs=[inp, tar], outputs=last)


discriminator = Discriminator()
disc_out = discriminator([inp, gen_output], training=False)
print("discriminator", disc_out.shape)


def discriminator_loss(disc_real_output, disc_generated_output):
    real_loss = loss_object(tf.ones_like(disc_real_output), disc_real_output)
    generated_loss = loss_object(tf.zeros_like(disc_generated_output), disc_generated_output)
    return real_loss + generated_loss


generator_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
discriminator_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
checkpoint = tf.train.Checkpoint(generator_optimizer=generator_optimizer,
                                 discriminator_optimizer=discriminator_optimizer,
                                 generator=generator, discriminator=discriminator)
log_dir = "logs/"
summary_writer = tf.summary.create_file_writer(log_dir + "fit/")


@tf.function
def train_step(input_image, target, step):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        gen_output = generator(input_image, training=True)
        disc_real_output = discriminator([input_image, target], training=True)
        disc_generated_output = discriminator([input_image, gen_output], training=True)
        gen_total_loss, gen_gan_loss, gen_l1_loss = generator_loss(disc_generated_output,
                                                                   gen_output, target)
        disc_loss = discriminator_loss(disc_real_output, disc_generated_output)
    generator_gradients = gen_tape.gradient(gen_total_loss, generator.trainable_variables)
    discriminator_gradients = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    generator_optimizer.apply_gradients(zip(generator_gradients,
                                            generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(discriminator_gradients,
                                                discriminator.trainable_variables))
    with summary_writer.as_default():
        tf.summary.scalar('gen_total_loss', gen_total_loss, step=step // 2)
        tf.summary.scalar('gen_gan_loss', gen_gan_loss, step=step // 2)
        tf.summary.scalar('gen_l1_loss', gen_l1_loss, step=step // 2)
        tf.summary.scalar('disc_loss', disc_loss, step=step // 2)


train_dataset = tf.data.Dataset.from_tensor_slices(
    (rng.uniform(-1, 1, (4, IMG, IMG, 3)).astype("float32"),
     rng.uniform(-1, 1, (4, IMG, IMG, 3)).astype("float32"))).batch(1)


def fit(train_ds, test_ds, steps):
    for step, (input_image, target) in train_ds.repeat().take(steps).enumerate():
        train_step(input_image, target, step)
        if (step + 1) % 2 == 0:
            print('.', end='', flush=True)
    print()


fit(train_dataset, train_dataset, steps=4)
checkpoint.save(file_prefix="./training_checkpoints/ckpt")
checkpoint.restore(tf.train.latest_checkpoint("./training_checkpoints"))
summary_writer.flush()
print("pix2pix done")

# -- Introduction to modules, layers, and models -------------------------------------------------
class SimpleModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_variable = tf.Variable(5.0, name="train_me")
        self.non_trainable_variable = tf.Variable(5.0, trainable=False, name="do_not_train_me")

    def __call__(self, x):
        return self.a_variable * x + self.non_trainable_variable


simple_module = SimpleModule(name="simple")
print(simple_module(tf.constant(5.0)))
print("trainable variables:", simple_module.trainable_variables)
print("all variables:", simple_module.variables)


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name='w')
        self.b = tf.Variable(tf.zeros([out_features]), name='b')

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class MySequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    @tf.function
    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


my_model = MySequentialModule(name="the_model")
print("Model results:", my_model(tf.constant([[2.0, 2.0, 2.0]])).shape)
print("Submodules:", my_model.submodules)
for var in my_model.variables:
    print(var, "\n")
chkp_path = "my_checkpoint"
checkpoint = tf.train.Checkpoint(model=my_model)
checkpoint.write(chkp_path)
print(tf.train.list_variables(chkp_path))
new_model = MySequentialModule()
new_checkpoint = tf.train.Checkpoint(model=new_model)
new_checkpoint.restore("my_checkpoint")
print(new_model(tf.constant([[2.0, 2.0, 2.0]])).shape)
print(my_model([[2.0, 2.0, 2.0]]).shape)
print(my_model([[[2.0, 2.0], [2.0, 2.0]]]).shape if False else "retrace ok")
stamp = "20261124"
logdir = "logs/func/%s" % stamp
writer = tf.summary.create_file_writer(logdir)
new_model = MySequentialModule()
tf.summary.trace_on(graph=True)
z = print(new_model(tf.constant([[2.0, 2.0, 2.0]])).shape)
with writer.as_default():
    tf.summary.trace_export(name="my_func_trace", step=0, profiler_outdir=logdir)
tf.saved_model.save(my_model, "the_saved_model")
new_model = tf.saved_model.load("the_saved_model")
print(isinstance(new_model, SimpleModule))
print(new_model([[2.0, 2.0, 2.0]]).shape)


class FlexibleDenseModule(tf.Module):
    def __init__(self, out_features, name=None):
        super().__init__(name=name)
        self.is_built = False
        self.out_features = out_features

    def __call__(self, x):
        if not self.is_built:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], self.out_features]), name='w')
            self.b = tf.Variable(tf.zeros([self.out_features]), name='b')
            self.is_built = True
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class MyDense(tf.keras.layers.Layer):
    def __init__(self, in_features, out_features, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name='w')
        self.b = tf.Variable(tf.zeros([out_features]), name='b')

    def call(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


simple_layer = MyDense(name="simple", in_features=3, out_features=3)
print(simple_layer(tf.constant([[2.0, 2.0, 2.0]])).shape)  # Keras 3: tensors


class FlexibleDense(tf.keras.layers.Layer):
    def __init__(self, out_features, **kwargs):
        super().__init__(**kwargs)
        self.out_features = out_features

    def build(self, input_shape):
        self.w = tf.Variable(tf.random.normal([input_shape[-1], self.out_features]), name='w')
        self.b = tf.Variable(tf.zeros([self.out_features]), name='b')

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


flexible_dense = FlexibleDense(out_features=3)
print(flexible_dense.variables)
print("Model results:", flexible_dense(tf.constant([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]])).shape)
print(len(flexible_dense.variables))


class MySequentialModel(tf.keras.Model):
    def __init__(self, name=None, **kwargs):
        super().__init__(**kwargs)
        self.dense_1 = FlexibleDense(out_features=3)
        self.dense_2 = FlexibleDense(out_features=2)

    def call(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


my_sequential_model = MySequentialModel(name="the_model")
print("Model results:", my_sequential_model(tf.constant([[2.0, 2.0, 2.0]])).shape)
print(len(my_sequential_model.variables))
inputs = tf.keras.Input(shape=[3, ])
x = my_sequential_model.dense_1(inputs)
x = my_sequential_model.dense_2(x)
my_functional_model = tf.keras.Model(inputs=inputs, outputs=x)
my_functional_model.summary()
print(my_functional_model(tf.constant([[2.0, 2.0, 2.0]])).shape)
my_sequential_model.save("exname_of_file.keras")
print("modules guide done")

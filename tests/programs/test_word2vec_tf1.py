"""TensorFlow's word2vec_basic tutorial, written as it is (TF1 graph, placeholders,
embedding_lookup, nce_loss, GradientDescentOptimizer, cosine similarity of normalized
embeddings), on a small synthetic corpus where each word predicts its successor."""

import math

import numpy as np

import ndflow

tf = ndflow.compat.v1


def test_word2vec_basic_learns_the_successor_relation():
    vocabulary_size, embedding_size, batch_size, num_sampled = 50, 16, 64, 8
    rng = np.random.default_rng(0)
    graph = ndflow.Graph()
    with graph.as_default():
        tf.set_random_seed(1)
        train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
        train_labels = tf.placeholder(tf.int32, shape=[batch_size, 1])
        valid_dataset = tf.constant([0, 10, 20], dtype=tf.int32)
        embeddings = tf.Variable(
            tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
        nce_weights = tf.Variable(tf.truncated_normal([vocabulary_size, embedding_size],
                                                      stddev=1.0 / math.sqrt(embedding_size)))
        nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
        loss = tf.reduce_mean(
            tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=train_labels,
                           inputs=embed, num_sampled=num_sampled,
                           num_classes=vocabulary_size))
        optimizer = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keep_dims=True))
        normalized_embeddings = embeddings / norm
        valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
        similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)
        init = tf.global_variables_initializer()

    losses = []
    with tf.Session(graph=graph) as session:
        init.run()
        for _ in range(300):
            words = rng.integers(0, vocabulary_size, batch_size)
            feed = {train_inputs: words,
                    train_labels: ((words + 1) % vocabulary_size).reshape(-1, 1)}
            _, loss_val = session.run([optimizer, loss], feed_dict=feed)
            losses.append(loss_val)
        sim = similarity.eval()
    assert np.mean(losses[-30:]) < 0.5 * np.mean(losses[:30])
    assert sim.shape == (3, vocabulary_size)
    np.testing.assert_allclose(sim[np.arange(3), [0, 10, 20]], 1.0, rtol=1e-5)

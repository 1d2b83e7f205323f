# TF guide "Ragged tensors": its output (every printed ragged tensor, error text, shape and
# value) equals TF 2.21's.
import math
import numpy as np
import ndflow as tf
digits = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
words = tf.ragged.constant([["So", "long"], ["thanks", "for", "all", "the", "fish"]])
print(tf.add(digits, 3))
print(tf.reduce_mean(digits, axis=1))
print(tf.concat([digits, [[5, 3]]], axis=0))
print(tf.tile(digits, [1, 2]))
print(tf.strings.substr(words, 0, 2))
print(tf.map_fn(tf.math.square, digits))
print(digits[0])
print(digits[:, :2])
print(digits[:, -2:])
print(digits + 3)
print(digits + tf.ragged.constant([[1, 2, 3, 4], [], [5, 6, 7], [8], []]))
times_two_plus_one = lambda x: x * 2 + 1
print(tf.ragged.map_flat_values(times_two_plus_one, digits))
print(digits.to_list())
print(digits.numpy())
sentences = tf.ragged.constant([["Let's", "build", "some", "ragged", "tensors", "!"], ["We", "can", "use", "tf.ragged.constant", "."]])
print(sentences)
paragraphs = tf.ragged.constant([[['I', 'have', 'a', 'cat'], ['His', 'name', 'is', 'Mat']], [['Do', 'you', 'want', 'to', 'come', 'visit'], ["I'm", 'free', 'tomorrow']]])
print(paragraphs)
print(tf.RaggedTensor.from_value_rowids(values=[3, 1, 4, 1, 5, 9, 2], value_rowids=[0, 0, 0, 0, 2, 2, 3]))
print(tf.RaggedTensor.from_row_lengths(values=[3, 1, 4, 1, 5, 9, 2], row_lengths=[4, 0, 2, 1]))
print(tf.RaggedTensor.from_row_splits(values=[3, 1, 4, 1, 5, 9, 2], row_splits=[0, 4, 4, 6, 7]))
print(tf.ragged.constant([["Hi"], ["How", "are", "you"]]))
print(tf.ragged.constant([[1.0, 2.0], [3.0]]))
try:
  tf.ragged.constant([["one", "two"], [3, 4]])
except ValueError as exception:
  print(exception)
try:
  tf.ragged.constant(["A", ["B", "C"]])
except ValueError as exception:
  print(exception)
queries = tf.ragged.constant([['Who', 'is', 'Dan', 'Smith'], ['Pause'], ['Will', 'it', 'rain', 'later', 'today']])
num_buckets = 1024
embedding_size = 4
embedding_table = tf.Variable(tf.random.truncated_normal([num_buckets, embedding_size], stddev=1.0 / math.sqrt(embedding_size)))
word_buckets = tf.strings.to_hash_bucket_fast(queries, num_buckets)
word_embeddings = tf.nn.embedding_lookup(embedding_table, word_buckets)
marker = tf.fill([queries.nrows(), 1], '#')
padded = tf.concat([marker, queries, marker], axis=1)
bigrams = tf.strings.join([padded[:, :-1], padded[:, 1:]], separator='+')
bigram_buckets = tf.strings.to_hash_bucket_fast(bigrams, num_buckets)
bigram_embeddings = tf.nn.embedding_lookup(embedding_table, bigram_buckets)
all_embeddings = tf.concat([word_embeddings, bigram_embeddings], axis=1)
avg_embedding = tf.reduce_mean(all_embeddings, axis=1)
print(avg_embedding.shape)
x = tf.constant([[1, 2], [3, 4], [5, 6]])
print(tf.RaggedTensor.from_tensor(x, lengths=[1, 0, 2]))
rt = tf.ragged.constant([[1, 2], [3, 4, 5], [6], [], [7]])
print(rt.to_tensor(default_value=-1))
print(tf.RaggedTensor.from_tensor(tf.constant([[1, 0, 0], [2, 3, 0]]), padding=0))
rt = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
print(rt.row_lengths(), rt.value_rowids(), rt.nrows())
print(tf.ragged.stack([rt, rt]).shape)
print(tf.ragged.constant([[1, 2], [3]]).bounding_shape())
r = tf.ragged.constant([[1, 2], [3]])
print(r.shape, r.ragged_rank, r.flat_values)
print(tf.ragged.constant([[[1, 2], [3]], [[4]]]).nested_row_lengths())
@tf.function
def make_palindrome(x, axis):
  return tf.concat([x, tf.reverse(x, [axis])], axis)
print(make_palindrome(tf.constant([[1, 2], [3, 4], [5, 6]]), axis=1))
print(make_palindrome(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]), axis=1))
print(tf.ragged.constant([[1, 2], [3]]) == tf.ragged.constant([[1, 2], [3]]))
print("ragged guide done")

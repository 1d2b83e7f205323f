# TF tutorial "Unicode strings": its output equals TF 2.21's (every printed tensor, ragged
# tensor and error text).
import numpy as np
import ndflow as tf

print(tf.constant(u"Thanks 😊"))
print(tf.constant([u"You're", u"welcome!"]).shape)
text_utf8 = tf.constant(u"语言处理")
print(text_utf8)
text_utf16be = tf.constant(u"语言处理".encode("UTF-16-BE"))
print(text_utf16be)
text_chars = tf.constant([ord(char) for char in u"语言处理"])
print(text_chars)
print(tf.strings.unicode_decode(text_utf8, input_encoding='UTF-8'))
print(tf.strings.unicode_encode(text_chars, output_encoding='UTF-8'))
print(tf.strings.unicode_transcode(text_utf8, input_encoding='UTF8', output_encoding='UTF-16-BE'))

batch_utf8 = [s.encode('UTF-8') for s in
              [u'hÃllo', u'What is the weather tomorrow', u'Göödnight', u'😊']]
batch_chars_ragged = tf.strings.unicode_decode(batch_utf8, input_encoding='UTF-8')
for sentence_chars in batch_chars_ragged.to_list():
    print(sentence_chars)
batch_chars_padded = batch_chars_ragged.to_tensor(default_value=-1)
print(batch_chars_padded.numpy())
batch_chars_sparse = batch_chars_ragged.to_sparse()
nrows, ncols = batch_chars_sparse.dense_shape.numpy()
elements = [['_' for i in range(ncols)] for j in range(nrows)]
for (row, col), value in zip(batch_chars_sparse.indices.numpy(), batch_chars_sparse.values.numpy()):
    elements[row][col] = str(value)
value_lengths = []
for row in elements:
    for value in row:
        value_lengths.append(len(value))
max_width = max(value_lengths)
print('[%s]' % '\n '.join(
    '[%s]' % ', '.join(value.rjust(max_width) for value in row)
    for row in elements))
print(tf.strings.unicode_encode([[99, 97, 116], [100, 111, 103], [99, 111, 119]],
                                output_encoding='UTF-8'))
print(tf.strings.unicode_encode(batch_chars_ragged, output_encoding='UTF-8'))
print(tf.strings.unicode_encode(
    tf.RaggedTensor.from_sparse(batch_chars_sparse),
    output_encoding='UTF-8'))
print(tf.strings.unicode_encode(
    tf.RaggedTensor.from_tensor(batch_chars_padded, padding=-1),
    output_encoding='UTF-8'))

thanks = u'Thanks 😊'.encode('UTF-8')
num_bytes = tf.strings.length(thanks).numpy()
num_chars = tf.strings.length(thanks, unit='UTF8_CHAR').numpy()
print('{} bytes; {} UTF-8 characters'.format(num_bytes, num_chars))
print(tf.strings.substr(thanks, pos=7, len=1).numpy())
print(tf.strings.substr(thanks, pos=7, len=1, unit='UTF8_CHAR').numpy())
print(tf.strings.unicode_split(thanks, 'UTF-8').numpy())
codepoints, offsets = tf.strings.unicode_decode_with_offsets(u'🎈🎉🎊', 'UTF-8')
for (codepoint, offset) in zip(codepoints.numpy(), offsets.numpy()):
    print('At byte offset {}: codepoint {}'.format(offset, codepoint))

uscript = tf.strings.unicode_script([33464, 1041])  # ['芸', 'Б']
print(uscript.numpy())  # [17, 8] == [USCRIPT_HAN, USCRIPT_CYRILLIC]
print(tf.strings.unicode_script(batch_chars_ragged))

sentence_texts = [u'Hello, world.', u'世界こんにちは']
sentence_char_codepoint = tf.strings.unicode_decode(sentence_texts, 'UTF-8')
print(sentence_char_codepoint)
sentence_char_script = tf.strings.unicode_script(sentence_char_codepoint)
print(sentence_char_script)
sentence_char_starts_word = tf.concat(
    [tf.fill([sentence_char_codepoint.nrows(), 1], True),
     tf.not_equal(sentence_char_script[:, 1:], sentence_char_script[:, :-1])],
    axis=1)
word_starts = tf.squeeze(tf.where(sentence_char_starts_word.values), axis=1)
print(word_starts)
word_char_codepoint = tf.RaggedTensor.from_row_starts(
    values=sentence_char_codepoint.values,
    row_starts=word_starts)
print(word_char_codepoint)
sentence_num_words = tf.reduce_sum(
    tf.cast(sentence_char_starts_word, tf.int64),
    axis=1)
sentence_word_char_codepoint = tf.RaggedTensor.from_row_lengths(
    values=word_char_codepoint,
    row_lengths=sentence_num_words)
print(sentence_word_char_codepoint)
print(tf.strings.unicode_encode(sentence_word_char_codepoint, 'UTF-8').to_list())

# error handling the guide's API docs show
print(tf.strings.unicode_decode([b"\xff\xfeab", b"ok"], "UTF-8", errors="replace"))
print(tf.strings.unicode_decode([b"\xff\xfeab"], "UTF-8", errors="ignore"))
try:
    tf.strings.unicode_decode([b"\xff\xfeab"], "UTF-8", errors="strict")
except tf.errors.InvalidArgumentError as e:
    print("InvalidArgumentError", str(e).split("[Op:")[0].split("}} ")[-1])
print(tf.strings.unicode_transcode([b"a\xffb"], "UTF-8", "UTF-16-BE", replacement_char=63))
print(tf.strings.unicode_decode(u"abc".encode("UTF-16-LE"), "UTF-16-LE"))
print(tf.strings.unicode_encode([0x110000, 65], "UTF-8", errors="replace"))
print(tf.strings.unicode_split([u"ab", u"çd"], "UTF-8"))
print(tf.strings.length([u"ab😊", u""], unit="UTF8_CHAR"))
print(tf.strings.upper(u"straße"), tf.strings.lower(u"ÀB"))
print("unicode guide done")

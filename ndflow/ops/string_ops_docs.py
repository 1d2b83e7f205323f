"""The docstrings of string_ops.py's TF2 functions (attached at its end; see
core/doc_tables.py)."""

from __future__ import annotations


def _d(summary: str, args: str, ret: str, call: str, result: str, raises: str = "",
       details: str = "") -> str:
    raises = f"\n    Raises:\n      {raises}\n" if raises else ""
    return f"""{summary}
{details}
    Args:
{args}      name: optional name for the operation.

    Returns:
      {ret}
{raises}
    Example:
      >>> {call}
      {result}
    """


_IN = "      input: a string tensor.\n"
DOCS = {
    "string_join": _d("Joins the strings of several tensors elementwise.",
                      "      inputs: a list of string tensors of one shape (scalars broadcast).\n"
                      "      separator: the string placed between the joined pieces.\n",
                      "A string tensor of the common shape.",
                      "tf.strings.join([['a', 'b'], 'x'], separator='-').numpy()",
                      "array([b'a-x', b'b-x'], dtype=object)"),
    "string_length": _d("The length of each string, in bytes or in Unicode code points.",
                        _IN + "      unit: \"BYTE\" or \"UTF8_CHAR\" (code points of UTF-8 "
                        "text).\n", "An int32 tensor of the input's shape.",
                        "tf.strings.length(['ab', 'héllo']).numpy()",
                        "array([2, 6], dtype=int32)"),
    "lower": _d("Lowercases each string.",
                _IN + "      encoding: \"\" for ASCII only, or \"utf-8\" for Unicode text.\n",
                "A string tensor of the input's shape.", "tf.strings.lower('ABC').numpy()",
                "b'abc'"),
    "upper": _d("Uppercases each string.",
                _IN + "      encoding: \"\" for ASCII only, or \"utf-8\" for Unicode text.\n",
                "A string tensor of the input's shape.", "tf.strings.upper('abc').numpy()",
                "b'ABC'"),
    "strip": _d("Removes leading and trailing ASCII whitespace from each string.", _IN,
                "A string tensor of the input's shape.", "tf.strings.strip('  ab ').numpy()",
                "b'ab'"),
    "regex_full_match": _d("Whether each whole string matches a regular expression (RE2 "
                           "syntax).", _IN + "      pattern: the regex, a scalar string.\n",
                           "A boolean tensor of the input's shape.",
                           "tf.strings.regex_full_match(['abc', 'abd'], 'ab[c]').numpy()",
                           "array([ True, False])",
                           "InvalidArgumentError: if the pattern is not a valid RE2 regex."),
    "regex_replace": _d("Replaces the matches of a regular expression (RE2 syntax) in each "
                        "string.",
                        _IN + "      pattern: the regex.\n      rewrite: the replacement; "
                        "`\\1` inserts group 1, `\\0` the whole match.\n"
                        "      replace_global: if True replace every match, else only the "
                        "first.\n", "A string tensor of the input's shape.",
                        "tf.strings.regex_replace('a1b22', r'\\d+', '#').numpy()", "b'a#b#'",
                        "InvalidArgumentError: if the pattern is not a valid RE2 regex."),
    "string_to_number": _d("Parses each string as a number.",
                           "      input: a string tensor.\n      out_type: float32 (the "
                           "default), float64, int32 or int64.\n",
                           "A tensor of `out_type` and the input's shape.",
                           "tf.strings.to_number(['1.5', '-2']).numpy()",
                           "array([ 1.5, -2. ], dtype=float32)",
                           "InvalidArgumentError: if a string is not a number of that type."),
    "as_string": _d("Formats each element as a string.",
                    "      input: a numeric or boolean tensor.\n"
                    "      precision: digits after the decimal point for floats (-1: shortest "
                    "exact).\n      scientific: use scientific notation for floats.\n"
                    "      shortest: use the shorter of fixed and scientific notation.\n"
                    "      width: pad each result to this width (-1: no padding).\n"
                    "      fill: the padding character (\"\" pads with spaces; \"0\" with "
                    "zeros).\n", "A string tensor of the input's shape.",
                    "tf.strings.as_string([1.5, 2.0], precision=1).numpy()",
                    "array([b'1.5', b'2.0'], dtype=object)"),
    "reduce_join": _d("Joins the strings along the given axes.",
                      "      inputs: a string tensor.\n      axis: the axis or axes to join "
                      "along; None joins every axis.\n      keepdims: if True, the joined axes "
                      "stay as axes of size 1.\n      separator: the string placed between "
                      "joined elements.\n", "A string tensor of the reduced shape.",
                      "tf.strings.reduce_join([['a', 'b'], ['c', 'd']], axis=1).numpy()",
                      "array([b'ab', b'cd'], dtype=object)"),
    "substr": _d("The substrings of length `len` starting at `pos`.",
                 _IN + "      pos: int tensor of start positions (negative counts from the "
                 "end), broadcastable\n        against `input`.\n      len: int tensor of "
                 "lengths; a substring stops at the end of its string.\n      unit: \"BYTE\" "
                 "or \"UTF8_CHAR\": whether positions and lengths count bytes or code\n"
                 "        points.\n", "A string tensor of the broadcast shape.",
                 "tf.strings.substr('hello', 1, 3).numpy()", "b'ell'",
                 "InvalidArgumentError: if a position is out of range."),
    "split": _d("Splits strings on a separator.",
                "      input: a string tensor.\n      sep: the separator; None splits on runs "
                "of whitespace (dropping empty pieces).\n      maxsplit: the most splits per "
                "string (-1: no limit).\n",
                "For a scalar, a 1-D string tensor of the pieces; otherwise a `tf.RaggedTensor`\n"
                "      with one row of pieces per string.",
                "tf.strings.split('a b  c').numpy()",
                "array([b'a', b'b', b'c'], dtype=object)"),
    "bytes_split": _d("Splits strings into their bytes.", _IN,
                      "For a scalar, a 1-D tensor of one-byte strings; otherwise a "
                      "`tf.RaggedTensor`.", "tf.strings.bytes_split('abc').numpy()",
                      "array([b'a', b'b', b'c'], dtype=object)"),
    "unicode_decode": _d("Decodes strings into Unicode code points.",
                         _IN + "      input_encoding: \"UTF-8\", \"UTF-16-BE\" or "
                         "\"UTF-32-BE\".\n      errors: \"replace\", \"ignore\" or \"strict\" "
                         "for invalid input.\n      replacement_char: the code point used by "
                         "\"replace\".\n      replace_control_characters: whether C0 control "
                         "characters are replaced too.\n",
                         "For a scalar, a 1-D int32 tensor of code points; otherwise a "
                         "`tf.RaggedTensor`.",
                         "tf.strings.unicode_decode('hé', 'UTF-8').numpy()",
                         "array([104, 233], dtype=int32)",
                         "InvalidArgumentError: for invalid input with errors=\"strict\"."),
    "unicode_encode": _d("Encodes rows of Unicode code points as strings.",
                         "      input: int32 code points: a 1-D tensor (one string), or a "
                         "2-D or ragged tensor\n        (a string per row).\n"
                         "      output_encoding: \"UTF-8\", \"UTF-16-BE\" or \"UTF-32-BE\".\n"
                         "      errors: \"replace\", \"ignore\" or \"strict\" for invalid code "
                         "points.\n      replacement_char: the code point used by "
                         "\"replace\".\n",
                         "A string scalar for 1-D input, else a string tensor with one string "
                         "per row.", "tf.strings.unicode_encode([104, 233], 'UTF-8').numpy()",
                         "b'h\\xc3\\xa9'"),
    "decode_raw": _d("Reinterprets the bytes of each string as a vector of numbers.",
                     "      input_bytes: a string tensor.\n      out_type: the element dtype "
                     "(e.g. tf.uint8, tf.int32, tf.float32).\n      little_endian: whether "
                     "multi-byte values are stored little-endian.\n      fixed_length: "
                     "optional byte length each string is cut or zero-padded to first.\n",
                     "A tensor of `out_type` with one more axis than the input.",
                     "tf.io.decode_raw([b'\\x01\\x02'], tf.uint8).numpy()",
                     "array([[1, 2]], dtype=uint8)",
                     "InvalidArgumentError: if the string lengths differ or are not a multiple "
                     "of the element\n        size (without `fixed_length`)."),
}

"""AutoGraph: tf.function's conversion of Python control flow on tensors into graph control
flow (layer 4, beside the runtime whose tf.cond/tf.while_loop it stages). This package is also
the `tf.autograph` namespace, so it holds only what TensorFlow exports there.

    conversion.py    source -> AST -> transforms -> function; converted_call; error messages
    canonicalize.py  break/continue/return lowered into flags and guarded blocks
    expressions.py   and/or/not, `a if c else b`, calls, (optional) assert
    statements.py    if/while/for into ag__.if_stmt/while_stmt/for_stmt calls
    analysis.py      assigned/read names, liveness, definedness
    operators.py     the ag__ operators: Python semantics or staged tf.cond/tf.while_loop
    py_builtins.py   range/len (and print, with BUILTIN_FUNCTIONS) on tensors
    options.py       Feature, ConversionOptions
    api.py           tf.autograph.*
"""

from ndflow.autograph import api, options  # noqa: F401 - registers tf.autograph.*

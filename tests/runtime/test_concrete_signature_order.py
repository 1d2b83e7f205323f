"""`Function.pretty_printed_concrete_signatures` lists the traces in the order they were made,
as TF 2.21 does (the "Introduction to graphs" guide's my_relu: scalar tensor, Python list,
then a vector tensor), not grouped by kind of argument."""

import ndflow as tf


def test_signatures_in_tracing_order():
    @tf.function
    def my_relu(x):
        return tf.maximum(0., x)

    my_relu(tf.constant(5.5))
    my_relu([1, -1])
    my_relu(tf.constant([3., -3.]))
    my_relu(tf.constant(-2.5))   # no new trace
    text = my_relu.pretty_printed_concrete_signatures()
    inputs = [line.strip() for line in text.splitlines() if "POSITIONAL_OR_KEYWORD" in line]
    assert inputs == [
        "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)",
        "x (POSITIONAL_OR_KEYWORD): List[Literal[1], Literal[-1]]",
        "x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tf.float32, name=None)"]

"""Tiny training scripts the profiler tests run (in-process through cli.main, or as a
subprocess): a graph + Session loop with a global step, and a tf.function loop."""

SESSION_LOOP = '''
import sys
import numpy as np
import ndflow as tf
v1 = tf.compat.v1
steps = int(sys.argv[1])
with tf.Graph().as_default():
    x = v1.placeholder(tf.float32, [16, 12])
    w = tf.Variable(np.full((12, 6), 0.1, np.float32))
    step = v1.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w)))
    train = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        for i in range(steps):
            sess.run(train, {x: np.ones((16, 12), np.float32)})
            if len(sys.argv) > 2 and i == int(sys.argv[2]):
                raise RuntimeError("failing at step %d" % i)
        print("global step", sess.run(step))
'''

FUNCTION_LOOP = '''
import sys
import numpy as np
import ndflow as tf

@tf.function
def step_fn(x):
    return tf.reduce_sum(tf.tanh(x * 2.0 + 1.0))

x = tf.constant(np.ones((32, 32), np.float32))
for _ in range(int(sys.argv[1])):
    step_fn(x)
'''


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)

"""tf.signal beyond the FFT ops (ndflow/ops/spectral_ops.py): framing, windows, short-time
Fourier transforms, mel filterbanks, MFCCs and DCTs, composed from ops as TensorFlow's
tensorflow/python/ops/signal modules are."""

from ndflow.ops.signal import (  # noqa: F401 - importing a module declares its public names
    dct_ops,
    mdct_ops,
    mel_ops,
    shape_ops,
    stft_ops,
    window_ops,
)

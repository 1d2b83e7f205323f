"""NumPy float64 references of TensorFlow's optimizer update rules (training_ops.cc, Keras 3).

Each function takes the current state and returns the new state; checked once against
TensorFlow 2.21 itself (the tests then compare ndflow with these references only).
"""

from __future__ import annotations

import numpy as np


def gradient_descent(var, lr, grad):
    return var - lr * grad


def momentum(var, accum, lr, grad, mu, nesterov=False):
    accum = accum * mu + grad
    if nesterov:
        var = var - (grad * lr + accum * mu * lr)
    else:
        var = var - lr * accum
    return var, accum


def keras_momentum(var, accum, lr, grad, mu, nesterov=False):
    accum = accum * mu - lr * grad
    if nesterov:
        var = var + (accum * mu - lr * grad)
    else:
        var = var + accum
    return var, accum


def adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, eps, grad, nesterov=False):
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = m + (grad - m) * (1 - beta1)
    v = v + (grad * grad - v) * (1 - beta2)
    if nesterov:
        var = var - lr_t * (grad * (1 - beta1) + beta1 * m) / (np.sqrt(v) + eps)
    else:
        var = var - lr_t * m / (np.sqrt(v) + eps)
    return var, m, v


def adam_amsgrad(var, m, v, vhat, beta1_power, beta2_power, lr, beta1, beta2, eps, grad):
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = m + (grad - m) * (1 - beta1)
    v = v + (grad * grad - v) * (1 - beta2)
    vhat = np.maximum(vhat, v)
    var = var - lr_t * m / (np.sqrt(vhat) + eps)
    return var, m, v, vhat


def rms_prop(var, ms, mom, lr, rho, mu, eps, grad):
    ms = rho * ms + (1 - rho) * grad * grad
    mom = mu * mom + lr * grad / np.sqrt(ms + eps)
    return var - mom, ms, mom


def centered_rms_prop(var, mg, ms, mom, lr, rho, mu, eps, grad):
    mg = rho * mg + (1 - rho) * grad
    ms = rho * ms + (1 - rho) * grad * grad
    mom = mu * mom + lr * grad / np.sqrt(ms - mg * mg + eps)
    return var - mom, mg, ms, mom

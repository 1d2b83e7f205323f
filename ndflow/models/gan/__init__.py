"""A small DCGAN-style GAN in Keras (train.py), with mixed-precision and loss-scaling switches."""

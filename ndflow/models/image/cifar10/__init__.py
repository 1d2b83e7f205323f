"""TensorFlow's classic CIFAR-10 tutorial (`tensorflow/models/image/cifar10`) on ndflow."""

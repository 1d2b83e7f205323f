# ndflow in a container: TensorFlow's API on PyTorch's ATen kernels. Trains the MNIST example
# by default (downloads MNIST when the network allows, else trains on the bundled digits).
#
#   docker build -t ndflow .                                        # CPU PyTorch (default)
#   docker build -t ndflow:cuda --build-arg TORCH_VARIANT=cu128 .   # CUDA PyTorch
#   docker run --rm ndflow                                          # the MNIST example
#   docker run --rm --gpus all ndflow:cuda                          # on the host's GPUs
#   docker run --rm -it ndflow python                               # >>> import ndflow as tf
#
# CUDA: PyTorch's CUDA wheels carry their CUDA and cuDNN libraries, so the same slim base
# serves; the host needs the NVIDIA driver and the NVIDIA Container Toolkit (--gpus).
# BASE_IMAGE swaps the base for another Debian/Ubuntu image with Python >= 3.11 and pip.
# Extending the image (more packages, custom ops): docs/container.md.

ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

# ndflow is tested against exactly this PyTorch; "cpu" takes the CPU wheel (no CUDA download),
# "cu126", "cu128", ... the CUDA builds on PyTorch's index.
ARG TORCH_VERSION=2.13.0
ARG TORCH_VARIANT=cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# torch first, from PyTorch's index: ndflow's own requirement (torch<2.14) is then satisfied
# and pip does not fetch PyPI's default (CUDA) torch.
RUN pip install --no-cache-dir "torch==${TORCH_VERSION}" \
        --index-url "https://download.pytorch.org/whl/${TORCH_VARIANT}"

WORKDIR /opt/ndflow
COPY pyproject.toml README.md ./
COPY ndflow ./ndflow
RUN pip install --no-cache-dir /opt/ndflow \
    && python -c "import ndflow as tf; print(tf.constant(1.0) + 1)"

# Run as an unprivileged user (uid 1000) with a home: datasets are cached in ~/.ndflow/datasets.
RUN useradd --create-home --uid 1000 ndflow
USER 1000
WORKDIR /home/ndflow

CMD ["python", "-m", "ndflow.models.image.mnist.convolutional"]

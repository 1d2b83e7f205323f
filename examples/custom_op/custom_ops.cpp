// Two custom ops for ndflow, as a PyTorch C++ extension (see README.md beside this file):
//   ZeroOut        TensorFlow's "Create an op" guide: keeps the first element, zeroes the rest.
//   FusedBiasRelu  relu(x + bias) in one pass over memory, with FusedBiasReluGrad for its
//                  gradient (registered in Python with tf.RegisterGradient, as in TensorFlow).
// Per-operator ATen headers rather than <ATen/ATen.h> or <torch/extension.h>: a third of
// the compile time.
#define TORCH_ASSERT_ONLY_METHOD_OPERATORS
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include "ndflow_op_library.h"

// The declarations tf.load_op_library reads: TensorFlow's REGISTER_OP text, unchanged.
NDFLOW_OP_LIBRARY(ndflow_example_ops, R"ops(
REGISTER_OP("ZeroOut")
    .Attr("T: {int32, float}")
    .Input("to_zero: T")
    .Output("zeroed: T")
    .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);

REGISTER_OP("FusedBiasRelu")
    .Attr("T: {half, float, double}")
    .Input("x: T")
    .Input("bias: T")
    .Output("y: T")
    .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);

REGISTER_OP("FusedBiasReluGrad")
    .Attr("T: {half, float, double}")
    .Input("grad: T")
    .Input("y: T")
    .Output("dx: T")
    .SetShapeFn(::tensorflow::shape_inference::UnchangedShape);
)ops")

namespace {

at::Tensor zero_out(const at::Tensor& to_zero) {
  at::Tensor out = at::zeros_like(to_zero);
  if (to_zero.numel() > 0) {
    out.view({-1}).narrow(0, 0, 1).copy_(to_zero.reshape({-1}).narrow(0, 0, 1));
  }
  return out;
}

at::Tensor fused_bias_relu(const at::Tensor& x, const at::Tensor& bias) {
  TORCH_CHECK(bias.dim() == 1, "bias must be 1-D, got ", bias.dim(), "-D");
  TORCH_CHECK(x.dim() >= 1 && x.size(-1) == bias.size(0), "x's last dimension (",
              x.dim() ? x.size(-1) : 0, ") must equal bias's size (", bias.size(0), ")");
  at::Tensor xc = x.contiguous(), bc = bias.contiguous();
  at::Tensor y = at::empty_like(xc);
  const int64_t n = xc.numel(), c = bc.numel();
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "FusedBiasRelu", [&] {
    const scalar_t* xp = xc.data_ptr<scalar_t>();
    const scalar_t* bp = bc.data_ptr<scalar_t>();
    scalar_t* yp = y.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      const scalar_t v = xp[i] + bp[i % c];
      yp[i] = v > scalar_t(0) ? v : scalar_t(0);
    }
  });
  return y;
}

at::Tensor fused_bias_relu_grad(const at::Tensor& grad, const at::Tensor& y) {
  return grad.mul(y.gt(0).to(grad.scalar_type()));
}

}  // namespace

// The ATen operators, named like the ops; their schemas take the ops' inputs in order.
TORCH_LIBRARY(ndflow_example_ops, m) {
  m.def("ZeroOut(Tensor to_zero) -> Tensor");
  m.def("FusedBiasRelu(Tensor x, Tensor bias) -> Tensor");
  m.def("FusedBiasReluGrad(Tensor grad, Tensor y) -> Tensor");
}

TORCH_LIBRARY_IMPL(ndflow_example_ops, CPU, m) {
  m.impl("ZeroOut", &zero_out);
  m.impl("FusedBiasRelu", &fused_bias_relu);
  m.impl("FusedBiasReluGrad", &fused_bias_relu_grad);
}

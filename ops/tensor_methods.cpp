// Tensor's op methods and operators (declared in tensor.h): thin sugar over the ops, defined
// here in the ops floor so that the core never calls an op.
#include "add/add.h"
#include "common/define_op.h"
#include "matmul/matmul.h"

namespace mg {

Tensor Tensor::matmul(const Tensor& other) const { return mg::matmul(*this, other); }

Tensor& Tensor::add_(const Tensor& x, double alpha) {
  static const OpDef& add = builtin_op("add");
  MG_CHECK(alpha == 1.0, "add_", "alpha", "1", "{}", alpha);
  apply_op_into(add, {*this, x}, *this);
  return *this;
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }

}  // namespace mg

// Tensor's op methods and operators (declared in tensor.h): thin sugar over the ops, defined
// here in the ops floor so that the core never calls an op. The in-place ones write through
// apply_op_into, unrecorded, into the tensor's own memory.
#include "binary/binary.h"
#include "common/broadcast.h"
#include "common/define_op.h"
#include "expand/expand.h"
#include "matmul/matmul.h"
#include "minigraph/autograd.h"
#include "reduction/reduction.h"
#include "unary/unary.h"
#include "where/where.h"

namespace mg {

namespace {

// x must broadcast to self's shape: the result of an in-place write keeps self's shape.
void check_broadcasts_to_self(std::string_view method, const Tensor& self, const Tensor& x) {
  MG_CHECK(x.defined(), std::string(method), "x", "a defined tensor", "an undefined one");
  Shape both;
  MG_CHECK(broadcast_shapes(self.shape(), x.shape(), both) && both == self.shape(),
           std::string(method), "x",
           fmt::format("a shape that broadcasts to self's {}", shape_str(self.shape())), "{}",
           shape_str(x.shape()));
}

}  // namespace

Tensor Tensor::matmul(const Tensor& other) const { return mg::matmul(*this, other); }
Tensor Tensor::sum() const { return mg::sum(*this); }
Tensor Tensor::sum(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return mg::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const { return mg::mean(*this); }
Tensor Tensor::mean(const std::vector<std::int64_t>& dims, bool keepdim) const {
  return mg::mean(*this, dims, keepdim);
}
Tensor Tensor::exp() const { return mg::exp(*this); }
Tensor Tensor::expand(const Shape& shape) const { return mg::expand(*this, shape); }
Tensor Tensor::log() const { return mg::log(*this); }
Tensor Tensor::neg() const { return mg::neg(*this); }
Tensor Tensor::relu() const { return mg::relu(*this); }
Tensor Tensor::tanh() const { return mg::tanh(*this); }
Tensor Tensor::sigmoid() const { return mg::sigmoid(*this); }
Tensor Tensor::sqrt() const { return mg::sqrt(*this); }
Tensor Tensor::rsqrt() const { return mg::rsqrt(*this); }
Tensor Tensor::square() const { return mg::square(*this); }
Tensor Tensor::pow(double exponent) const { return mg::pow(*this, exponent); }
Tensor Tensor::eq(const Tensor& other) const { return mg::eq(*this, other); }
Tensor Tensor::ne(const Tensor& other) const { return mg::ne(*this, other); }
Tensor Tensor::lt(const Tensor& other) const { return mg::lt(*this, other); }
Tensor Tensor::le(const Tensor& other) const { return mg::le(*this, other); }
Tensor Tensor::gt(const Tensor& other) const { return mg::gt(*this, other); }
Tensor Tensor::ge(const Tensor& other) const { return mg::ge(*this, other); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return mg::where(condition, *this, other);
}
Tensor Tensor::masked_fill(const Tensor& mask, double value) const {
  return mg::masked_fill(*this, mask, value);
}

Tensor& Tensor::add_(const Tensor& x, double alpha) {
  static const OpDef& add_op = builtin_op("add");
  check_writable("add_");
  check_broadcasts_to_self("add_", *this, x);
  if (alpha == 1.0) {
    apply_op_into(add_op, {*this, x}, *this);
    return *this;
  }
  NoGradGuard no_grad;  // the scaled copy is a temporary, never part of a graph
  apply_op_into(add_op, {*this, scale(x, alpha)}, *this);
  return *this;
}

Tensor& Tensor::mul_(const Tensor& x) {
  static const OpDef& mul_op = builtin_op("mul");
  check_writable("mul_");
  check_broadcasts_to_self("mul_", *this, x);
  apply_op_into(mul_op, {*this, x}, *this);
  return *this;
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& x, double value) { return add(x, value); }
Tensor operator+(double value, const Tensor& x) { return add(x, value); }
Tensor operator-(const Tensor& x, double value) { return sub(x, value); }
Tensor operator-(double value, const Tensor& x) { return rsub(x, value); }
Tensor operator*(const Tensor& x, double value) { return scale(x, value); }
Tensor operator*(double value, const Tensor& x) { return scale(x, value); }
Tensor operator/(const Tensor& x, double value) { return div(x, value); }

Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& x, double value) { return eq(x, value); }
Tensor operator!=(const Tensor& x, double value) { return ne(x, value); }
Tensor operator<(const Tensor& x, double value) { return lt(x, value); }
Tensor operator<=(const Tensor& x, double value) { return le(x, value); }
Tensor operator>(const Tensor& x, double value) { return gt(x, value); }
Tensor operator>=(const Tensor& x, double value) { return ge(x, value); }

}  // namespace mg

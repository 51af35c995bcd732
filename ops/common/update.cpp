// The shape rule and the OpDef skeleton of the optimizer update ops (common/update.h).
#include "common/update.h"

#include <limits>

namespace mg {

OutputSpec update_infer(const OpDef& self, std::span<const Tensor> in) {
  for (std::size_t i = 0; i < in.size(); ++i) check_floating(self, i, in[i]);
  for (std::size_t i = 1; i < in.size(); ++i) {
    check_same_dtype(self, i, in[i], in[0].dtype());
    MG_CHECK(in[i].shape() == in[0].shape(), self.name, self.inputs[i],
             fmt::format("shape {} (as {})", shape_str(in[0].shape()), self.inputs[0]), "{}",
             shape_str(in[i].shape()));
  }
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

OpDef update_op(std::string name, std::string summary, std::vector<std::string> inputs) {
  OpDef op;
  op.name = std::move(name);
  op.summary = std::move(summary);
  op.inputs = std::move(inputs);
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any&) {
    return update_infer(self, in);
  };
  // Every kernel reads each element of every input before writing that index of out.
  op.out_may_alias_input = true;
  return op;
}

void check_attr_in(std::string_view op, std::string_view attr, double value, double lo, double hi) {
  MG_CHECK(std::isfinite(value) && value >= lo && value <= hi, std::string(op), std::string(attr),
           hi == std::numeric_limits<double>::max()
               ? fmt::format("a finite number >= {}", lo)
               : fmt::format("a finite number in [{}, {}]", lo, hi),
           "{}", value);
}

InputSpec spread_input(Shape shape, double lo) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;  // case shapes are small: no overflow
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = lo + 1.5 * static_cast<double>((i * 7919) % 1000) / 1000.0;
  }
  return InputSpec::real(std::move(shape)).with_values(std::move(values)).no_grad();
}

std::vector<std::pair<std::string, Shape>> update_case_shapes() {
  return {{"vector", {7}},     {"matrix", {3, 5}}, {"rank3", {2, 3, 4}},    {"size1", {1, 1}},
          {"scalar", Shape{}}, {"empty", {0, 3}},  {"threaded", {64, 1024}}};
}

}  // namespace mg

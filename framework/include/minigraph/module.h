// Modules own named parameters and child modules, as torch.nn.Module does. Parameters are
// registered by address, so a module is neither copied nor moved once built.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Dotted names from this module down: "tok_emb.weight".
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  std::int64_t num_parameters() const;
  void zero_grad();
  // Moves every parameter (and its gradient) to the device in place (Tensor::to_): handles
  // given out before, e.g. to an optimizer, see the move.
  void to(Device device);

 protected:
  // `slot` must outlive the module (a member); it is made a leaf that requires grad.
  void register_parameter(std::string name, Tensor& slot);
  void register_module(std::string name, Module& child);

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out) const;
  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
};

// The default initialisation of embedding tables: N(0, 1/sqrt(d_model)), seeded.
Tensor init_normal_scaled(const Shape& shape, std::int64_t d_model, std::uint64_t seed,
                          DType dtype = DType::f32);

}  // namespace mg

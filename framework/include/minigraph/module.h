// Modules own named parameters and child modules, as torch.nn.Module does. Parameters are
// registered by address, so a module is neither copied nor moved once built.
//
// Weights in and out: state_dict() names the parameters themselves; load_state_dict() writes
// into them (handles held elsewhere, e.g. by an optimizer, stay valid), checking every entry
// before it writes any; save() and load() do the same through a safetensors file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "minigraph/safetensors.h"  // StateDict
#include "minigraph/tensor.h"

namespace mg {

// What a non-strict load_state_dict left out (a strict one throws instead), each list in the
// order met: parameters as named_parameters() lists them, entries as the dict holds them.
struct LoadReport {
  std::vector<std::string> missing;     // parameters the dict has no entry for: left as they were
  std::vector<std::string> unexpected;  // entries no parameter is named: ignored
};

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
  // Moves every parameter (and its gradient) and every buffer to the device in place
  // (Tensor::to_): handles given out before, e.g. to an optimizer, see the move.
  void to(Device device);
  // Dotted names of the buffers: fixed tensors a module computes with but does not train
  // (a sinusoidal position table). They are not parameters and not in state_dict(): they are
  // made from the configuration, as PyTorch's non-persistent buffers.
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;

  // Dotted names -> the parameter tensors themselves (handles sharing their data and autograd
  // state, not copies), in named_parameters() order: writing into one writes the parameter.
  StateDict state_dict() const;
  // Copies `dict`'s values INTO the existing parameters (copy_ under NoGradGuard: the handles
  // and their data pointers stay the same; versions are bumped). An entry of another float
  // dtype is converted to the parameter's (as PyTorch does); its shape must be the
  // parameter's. Every entry is checked before anything is written, so a failure leaves every
  // parameter unchanged, and one mg::Error lists all problems at once:
  //   "missing: a, b; unexpected: c; shape: d expected [2, 3] got [3, 2]; dtype: e expected f32
  //   got i64; duplicate: f".
  // strict: missing and unexpected names are problems too. Not strict: they are skipped and
  // returned; wrong shapes, non-float dtypes, undefined tensors and duplicate names are errors
  // either way (as in PyTorch, where a shape mismatch fails even with strict=False).
  LoadReport load_state_dict(const StateDict& dict, bool strict = true);
  // state_dict() written to a safetensors file (save_safetensors: the framework and version
  // are added to `metadata`).
  void save(const std::string& path, const std::map<std::string, std::string>& metadata = {}) const;
  // load_state_dict(load_safetensors(path), strict); the file's errors name the file.
  LoadReport load(const std::string& path, bool strict = true);

 protected:
  // `slot` must outlive the module (a member); it is made a leaf that requires grad.
  void register_parameter(std::string name, Tensor& slot);
  void register_module(std::string name, Module& child);
  // `slot` must outlive the module; it takes no gradient (requires_grad stays false).
  void register_buffer(std::string name, Tensor& slot);

 private:
  using Slots = std::vector<std::pair<std::string, Tensor*>>;
  void collect(const std::string& prefix, Slots& params, Slots* buffers) const;
  Slots buffers_;
  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
};

}  // namespace mg

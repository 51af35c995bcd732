// Modules own named parameters and child modules, as torch.nn.Module does. A parameter, buffer
// or child module is registered as a member of the module, by its place in the object, so a
// module can be moved (the moved-to object has the same layout) but not copied (two modules
// would share their parameters' data); a child the module owns on the heap (ModuleList's) is
// registered by its unique_ptr.
//
// Weights in and out: state_dict() names the parameters themselves; load_state_dict() writes
// into them (handles held elsewhere, e.g. by an optimizer, stay valid), checking every entry
// before it writes any; save() and load() do the same through a safetensors file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
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
  Module(Module&&) noexcept = default;
  Module& operator=(Module&&) noexcept = default;

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
  // This module ("") and every module below it, depth first in registration order, with
  // dotted names ("blocks.0.attn"), as torch.nn.Module.named_modules().
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  // The module's type without its namespace or template arguments ("Linear", "ModuleList"), for
  // tables such as summary's.
  std::string type_name() const;

  // fn on every module below this one, depth first, then on this one, as
  // torch.nn.Module.apply(): how a model reaches all its layers of one kind.
  void apply(const std::function<void(Module&)>& fn);

  // Training mode (the default) or evaluation mode, set for this module and every module
  // below it, as torch.nn.Module.train() / eval(); dropout reads it.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

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
  // Each registers a member of this module (a data member of the class deriving from Module,
  // or of one of its members) under `name`: not empty, no '.', not taken in this module. A
  // parameter is made a leaf that requires grad; a buffer takes no gradient.
  void register_parameter(std::string name, Tensor& slot);
  void register_buffer(std::string name, Tensor& slot);
  void register_module(std::string name, Module& child);
  // A child this module owns (ModuleList's elements): kept on the heap, so it never moves.
  Module& register_module(std::string name, std::unique_ptr<Module> child);
  // Returns out; while a ModuleShapes recorder lives on this thread (module_summary.h), notes
  // out's shape as this module's output. A layer's forward returns through it.
  const Tensor& record_output(const Tensor& out) const;

 private:
  // A member's place: its offset from this Module, which a move of the whole object keeps.
  struct Member {
    std::string name;
    std::ptrdiff_t offset;
  };
  struct Child {
    std::string name;
    std::ptrdiff_t offset;          // a member child's place; unused when owned
    std::unique_ptr<Module> owned;  // null for a member child
  };
  using Slots = std::vector<std::pair<std::string, Tensor*>>;
  // Throws mg::Error for an empty or dotted name, or one this module has registered already.
  void check_new_name(const std::string& what, const std::string& name) const;
  // The member's offset from this module, after its name's checks.
  std::ptrdiff_t offset_of(const void* member, const std::string& what,
                           const std::string& name) const;
  Tensor* tensor_at(const Member& member) const;
  Module* child_at(const Child& child) const;
  void collect(const std::string& prefix, Slots& params, Slots* buffers) const;
  void collect_modules(const std::string& prefix,
                       std::vector<std::pair<std::string, const Module*>>& out) const;
  std::vector<Member> params_, buffers_;
  std::vector<Child> children_;
  bool training_ = true;
};

}  // namespace mg

// Modules: registration, the parameter list, moves between devices, and state dicts (names to
// parameters, loaded into the parameters after every entry has been checked).
#include "minigraph/module.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <typeinfo>
#include <unordered_map>

#include "minigraph/autograd.h"
#include "minigraph/error.h"

namespace mg {

namespace {

// A member lies within its module: an address further away is not one (a local, or another
// object's), which a move would leave behind. Modules are far smaller than this.
constexpr std::ptrdiff_t kMemberReach = std::ptrdiff_t{1} << 24;

}  // namespace

void Module::check_new_name(const std::string& what, const std::string& name) const {
  auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& m) { return m.name == name; });
  };
  MG_CHECK(!name.empty() && name.find('.') == std::string::npos, what, "name", "a name without '.'",
           "'{}'", name);
  MG_CHECK(!taken(params_) && !taken(buffers_) && !taken(children_), what, name,
           "a name not yet registered in this module", "'{}' registered already", name);
}

std::ptrdiff_t Module::offset_of(const void* member, const std::string& what,
                                 const std::string& name) const {
  const std::ptrdiff_t offset = static_cast<std::ptrdiff_t>(
      reinterpret_cast<std::uintptr_t>(member) - reinterpret_cast<std::uintptr_t>(this));
  MG_CHECK(offset > -kMemberReach && offset < kMemberReach, what, name, "a member of the module",
           "an object {} bytes away from it", offset);
  check_new_name(what, name);
  return offset;
}

Tensor* Module::tensor_at(const Member& member) const {
  return reinterpret_cast<Tensor*>(reinterpret_cast<std::uintptr_t>(this) + member.offset);
}

Module* Module::child_at(const Child& child) const {
  if (child.owned != nullptr) return child.owned.get();
  return reinterpret_cast<Module*>(reinterpret_cast<std::uintptr_t>(this) + child.offset);
}

void Module::register_parameter(std::string name, Tensor& slot) {
  MG_CHECK(slot.defined() && is_floating(slot.dtype()), "register_parameter", name,
           "a defined floating-point tensor", "{}",
           slot.defined() ? std::string(dtype_name(slot.dtype())) : "an undefined tensor");
  const std::ptrdiff_t offset = offset_of(&slot, "register_parameter", name);
  slot.set_requires_grad(true);
  params_.push_back({std::move(name), offset});
}

void Module::register_buffer(std::string name, Tensor& slot) {
  MG_CHECK(slot.defined() && !slot.requires_grad(), "register_buffer", name,
           "a defined tensor that requires no grad", "{}",
           slot.defined() ? "one that requires grad (register it as a parameter)"
                          : "an undefined tensor");
  const std::ptrdiff_t offset = offset_of(&slot, "register_buffer", name);
  buffers_.push_back({std::move(name), offset});
}

void Module::register_module(std::string name, Module& child) {
  MG_CHECK(&child != this, "register_module", name, "another module", "the module itself");
  const std::ptrdiff_t offset = offset_of(&child, "register_module", name);
  children_.push_back({std::move(name), offset, nullptr});
}

Module& Module::register_module(std::string name, std::unique_ptr<Module> child) {
  MG_CHECK(child != nullptr, "register_module", name, "a module", "a null pointer");
  check_new_name("register_module", name);
  Module& out = *child;
  children_.push_back({std::move(name), 0, std::move(child)});
  return out;
}

void Module::collect(const std::string& prefix, Slots& params, Slots* buffers) const {
  for (const Member& m : params_) params.emplace_back(prefix + m.name, tensor_at(m));
  if (buffers != nullptr) {
    for (const Member& m : buffers_) buffers->emplace_back(prefix + m.name, tensor_at(m));
  }
  for (const Child& c : children_) child_at(c)->collect(prefix + c.name + ".", params, buffers);
}

void Module::collect_modules(const std::string& prefix,
                             std::vector<std::pair<std::string, const Module*>>& out) const {
  out.emplace_back(prefix, this);
  for (const Child& c : children_) {
    child_at(c)->collect_modules(prefix.empty() ? c.name : prefix + "." + c.name, out);
  }
}

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out;
  collect_modules("", out);
  return out;
}

std::string Module::type_name() const {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(typeid(*this).name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 ? demangled.get() : typeid(*this).name();
  name = name.substr(0, name.find('<'));
  const std::size_t last_colon = name.rfind("::");
  return last_colon == std::string::npos ? name : name.substr(last_colon + 2);
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const Child& c : children_) child_at(c)->apply(fn);
  fn(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (const Child& c : children_) child_at(c)->train(on);
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  Slots params, buffers;
  collect("", params, &buffers);
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [name, slot] : buffers) out.emplace_back(name, *slot);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect("", slots, nullptr);
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [name, slot] : slots) out.emplace_back(name, *slot);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (auto& t : parameters()) n = checked_add(n, t.numel(), "Module", "num_parameters");
  return n;
}

void Module::zero_grad() {
  for (auto t : parameters()) t.zero_grad();
}

void Module::to(Device device) {
  Slots slots, buffers;
  collect("", slots, &buffers);
  slots.insert(slots.end(), buffers.begin(), buffers.end());
  // Every parameter is checked before any moves: a refusal leaves the module where it was.
  for (auto& [name, slot] : slots) {
    MG_CHECK(slot->device() == device || slot->impl()->storage.use_count() == 1, "Module::to", name,
             "a parameter that owns its storage alone",
             "one sharing it with {} other tensors (views or detach())",
             slot->impl()->storage.use_count() - 1);
  }
  for (auto& [name, slot] : slots) slot->to_(device);
}

StateDict Module::state_dict() const { return named_parameters(); }

namespace {

// The problems of one load, by kind, joined into one message at the end.
struct Problems {
  std::vector<std::string> missing, unexpected, shape, dtype, duplicate, undefined;

  bool errors() const {  // what fails a load even when it is not strict
    return !shape.empty() || !dtype.empty() || !duplicate.empty() || !undefined.empty();
  }
  std::string str(bool strict) const {
    std::vector<std::string> parts;
    auto list = [&](const char* kind, const std::vector<std::string>& names) {
      if (!names.empty()) parts.push_back(fmt::format("{}: {}", kind, fmt::join(names, ", ")));
    };
    if (strict) {
      list("missing", missing);
      list("unexpected", unexpected);
    }
    // One part each: a shape holds commas of its own.
    for (auto& item : shape) parts.push_back("shape: " + item);
    for (auto& item : dtype) parts.push_back("dtype: " + item);
    list("duplicate", duplicate);
    list("undefined", undefined);
    return fmt::format("{}", fmt::join(parts, "; "));
  }
};

using EntryIndex = std::unordered_map<std::string, std::size_t>;  // name -> entry of the dict

// Names to entries; a second entry of a name is an error (which value would win is a guess).
EntryIndex index_entries(const StateDict& dict, Problems& problems) {
  EntryIndex index;
  for (std::size_t i = 0; i < dict.size(); ++i) {
    const auto [it, added] = index.emplace(dict[i].first, i);
    if (!added && std::find(problems.duplicate.begin(), problems.duplicate.end(), dict[i].first) ==
                      problems.duplicate.end()) {
      problems.duplicate.push_back(dict[i].first);
    }
  }
  return index;
}

// Whether `src` can be loaded into the parameter `name` (`slot`); notes the problem if not.
bool entry_fits(const std::string& name, const Tensor& slot, const Tensor& src,
                Problems& problems) {
  if (!src.defined()) {
    problems.undefined.push_back(name);
    return false;
  }
  if (src.shape() != slot.shape()) {
    problems.shape.push_back(fmt::format("{} expected {} got {}", name, shape_str(slot.shape()),
                                         shape_str(src.shape())));
    return false;
  }
  // Floats convert to the parameter's float dtype (f64 weights into an f32 model); ids or
  // counts in a weight's place are a mistake, not a conversion.
  if (!is_floating(src.dtype())) {
    problems.dtype.push_back(fmt::format("{} expected {} got {}", name, dtype_name(slot.dtype()),
                                         dtype_name(src.dtype())));
    return false;
  }
  return true;
}

struct LoadPlan {
  std::vector<std::pair<Tensor*, Tensor>> writes;  // parameter <- source, in its dtype
  std::set<std::string> matched;                   // parameters the dict has an entry for
};

// The write of every parameter whose entry fits; the others' problems are noted.
LoadPlan plan_writes(const std::vector<std::pair<std::string, Tensor*>>& slots,
                     const StateDict& dict, const EntryIndex& index, Problems& problems) {
  LoadPlan plan;
  for (const auto& [name, slot] : slots) {
    const auto it = index.find(name);
    if (it == index.end()) {
      problems.missing.push_back(name);
      continue;
    }
    plan.matched.insert(name);
    const Tensor& src = dict[it->second].second;
    if (entry_fits(name, *slot, src, problems)) plan.writes.emplace_back(slot, src);
  }
  return plan;
}

void list_unexpected(const StateDict& dict, const std::set<std::string>& matched,
                     Problems& problems) {
  std::set<std::string> listed;  // an unexpected name given twice is listed once
  for (auto& [name, tensor] : dict) {
    if (!matched.contains(name) && listed.insert(name).second) problems.unexpected.push_back(name);
  }
}

void check_loadable(const Problems& problems, bool strict) {
  const bool fails =
      problems.errors() || (strict && (!problems.missing.empty() || !problems.unexpected.empty()));
  MG_CHECK(!fails, "Module::load_state_dict", "state_dict",
           strict ? "one entry for every parameter, of its shape and a float dtype, and no other"
                  : "entries of the parameters' shapes and float dtypes, each name once",
           "{}", problems.str(strict));
}

// Sources made ready before the first write, so that an allocation failing here changes
// nothing: converted copies, and copies of sources that are (part of) another parameter's
// memory, which the writes could otherwise overwrite before reading (a dict that swaps
// two parameters' values).
void prepare_sources(std::vector<std::pair<Tensor*, Tensor>>& writes) {
  std::set<const Storage*> storages;
  for (auto& [slot, src] : writes) storages.insert(slot->impl()->storage.get());
  for (auto& [slot, src] : writes) {
    if (src.dtype() != slot->dtype()) {
      src = src.to(slot->dtype());
    } else if (storages.contains(src.impl()->storage.get()) &&
               !(src.impl()->storage == slot->impl()->storage &&
                 src.raw_data() == slot->raw_data())) {
      src = src.clone();
    }
  }
}

}  // namespace

LoadReport Module::load_state_dict(const StateDict& dict, bool strict) {
  std::vector<std::pair<std::string, Tensor*>> slots;
  collect("", slots, nullptr);
  Problems problems;
  const EntryIndex index = index_entries(dict, problems);

  // Every check first: nothing is written unless everything fits.
  LoadPlan plan = plan_writes(slots, dict, index, problems);
  list_unexpected(dict, plan.matched, problems);
  check_loadable(problems, strict);

  prepare_sources(plan.writes);
  NoGradGuard no_grad;  // parameters require grad: writing into them is not recorded
  for (auto& [slot, src] : plan.writes) slot->copy_(src);
  return LoadReport{std::move(problems.missing), std::move(problems.unexpected)};
}

void Module::save(const std::string& path,
                  const std::map<std::string, std::string>& metadata) const {
  save_safetensors(path, state_dict(), metadata);
}

LoadReport Module::load(const std::string& path, bool strict) {
  return load_state_dict(load_safetensors(path), strict);
}

}  // namespace mg

#include "bindings/triton/model_config.h"

#include <cstdlib>
#include <limits>
#include <sstream>

namespace guardjit_triton {
namespace {

bool ParseTensors(const Json& config, const char* field,
                  std::vector<TensorConfig>* out, std::string* error) {
  const Json* list = config.Find(field);
  if (list == nullptr || list->kind() == Json::Kind::kNull) return true;
  if (!list->is_array()) {
    *error = std::string("'") + field + "' is not a list";
    return false;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& t = (*list)[i];
    TensorConfig tc;
    const Json* name = t.Find("name");
    if (name == nullptr || !name->is_string() || name->AsString().empty()) {
      *error = std::string(field) + "[" + std::to_string(i) + "] has no name";
      return false;
    }
    tc.name = name->AsString();
    const std::string what = std::string(field) + " '" + tc.name + "'";
    const Json* type = t.Find("data_type");
    const std::string type_name =
        type != nullptr && type->is_string() ? type->AsString() : "";
    tc.dtype = FromConfigName(type_name);
    if (tc.dtype == nullptr) {
      *error = what + ": data_type '" + type_name +
               "' is not one guardjit runs (TYPE_FP32, TYPE_FP64, TYPE_FP16, "
               "TYPE_BF16, TYPE_INT8/16/32/64, TYPE_UINT8, TYPE_BOOL)";
      return false;
    }
    if (const Json* dims = t.Find("dims");
        dims != nullptr && dims->is_array()) {
      for (size_t k = 0; k < dims->size(); ++k) {
        int64_t d = 0;
        if (!(*dims)[k].AsInt(&d) || d < -1) {
          *error =
              what + ": dims[" + std::to_string(k) + "] is not -1 or a size";
          return false;
        }
        tc.dims.push_back(d);
      }
    }
    out->push_back(std::move(tc));
  }
  return true;
}

bool ParseInt(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseParameters(ModelConfig* c, std::string* error) {
  for (const auto& [key, value] : c->parameters) {
    const std::string what = "parameter '" + key + "' = '" + value + "'";
    int64_t v = 0;
    if (key == "dynamic") {
      if (value == "auto") {
        c->dynamic = GJ_DYNAMIC_AUTO;
      } else if (value == "static") {
        c->dynamic = GJ_DYNAMIC_STATIC;
      } else if (value == "dynamic") {
        c->dynamic = GJ_DYNAMIC_DYNAMIC;
      } else {
        *error = what + ": expected auto, static or dynamic";
        return false;
      }
    } else if (key == "recompile_limit") {
      if (!ParseInt(value, 1, 1 << 20, &v)) {
        *error = what + ": expected a count from 1";
        return false;
      }
      c->recompile_limit = static_cast<int32_t>(v);
    } else if (key == "num_threads") {
      if (!ParseInt(value, 0, 4096, &v)) {
        *error = what + ": expected 0 (the process-wide pool) or a count";
        return false;
      }
      c->num_threads = static_cast<int32_t>(v);
    } else if (key == "compile") {
      if (value == "sync") {
        c->compile = GJ_COMPILE_SYNC;
      } else if (value == "async") {
        c->compile = GJ_COMPILE_ASYNC;
      } else {
        *error = what + ": expected sync or async";
        return false;
      }
    } else if (key == "mode") {
      if (value == "default") {
        c->mode = GJ_MODE_DEFAULT;
      } else if (value == "reduce-overhead") {
        c->mode = GJ_MODE_REDUCE_OVERHEAD;
      } else {
        *error = what + ": expected default or reduce-overhead";
        return false;
      }
    } else if (key == "warmup") {
      std::stringstream items(value);
      std::string item;
      while (std::getline(items, item, ',')) {
        if (!ParseInt(item, 1, 1 << 30, &v)) {
          *error = what + ": expected batch sizes, as \"1,4,8\"";
          return false;
        }
        c->warmup.push_back(v);
      }
    } else if (key == "cache_dir") {
      c->cache_dir = value;
    } else if (key == "remote_cache") {
      if (!value.empty() && value.rfind("redis://", 0) != 0) {
        *error = what + ": expected a redis:// URL, or \"\" for none";
        return false;
      }
      c->remote_cache = value;
    } else if (key == "cache_key_file") {
      c->cache_key_file = value;
    } else if (key == "max_cache_bytes") {
      if (!ParseInt(value, 0, std::numeric_limits<int64_t>::max(), &v)) {
        *error = what + ": expected a byte count (0: unbounded)";
        return false;
      }
      c->max_cache_bytes = v;
    } else {
      *error = "unknown parameter '" + key +
               "' (guardjit's are dynamic, recompile_limit, num_threads, "
               "compile, mode, warmup, cache_dir, remote_cache, "
               "cache_key_file, max_cache_bytes)";
      return false;
    }
  }
  return true;
}

// dims of a graph input or output: its declared rank and sizes (-1 where
// dynamic), or false when the rank is not declared.
struct Declared {
  std::string name;
  gj_dtype dtype;
  int64_t rank;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
};

Declared Declaration(const gj_graph* g, size_t i, bool input) {
  Declared d;
  d.name = input ? gj_graph_input_name(g, i) : gj_graph_output_name(g, i);
  d.dtype = input ? gj_graph_input_dtype(g, i) : gj_graph_output_dtype(g, i);
  d.rank = input ? gj_graph_input_rank(g, i) : gj_graph_output_rank(g, i);
  for (int64_t k = 0; k < d.rank; ++k) {
    d.dims.push_back(input ? gj_graph_input_dim(g, i, k)
                           : gj_graph_output_dim(g, i, k));
    const char* s = input ? gj_graph_input_dim_symbol(g, i, k)
                          : gj_graph_output_dim_symbol(g, i, k);
    d.symbols.push_back(s == nullptr ? "" : s);
  }
  return d;
}

std::vector<Declared> Declarations(const gj_graph* g, bool input) {
  std::vector<Declared> out;
  const size_t n = input ? gj_graph_num_inputs(g) : gj_graph_num_outputs(g);
  for (size_t i = 0; i < n; ++i) out.push_back(Declaration(g, i, input));
  return out;
}

// The symbol of dim 0 shared by every declaration, or "".
std::string BatchSymbol(const std::vector<Declared>& all) {
  std::string symbol;
  for (const Declared& d : all) {
    if (d.rank < 1 || d.symbols[0].empty()) return "";
    if (symbol.empty()) symbol = d.symbols[0];
    if (d.symbols[0] != symbol) return "";
  }
  return symbol;
}

bool HasList(const Json& config, const char* field) {
  const Json* list = config.Find(field);
  return list != nullptr && list->is_array() && list->size() > 0;
}

bool FillList(const std::vector<Declared>& decls, bool batching,
              const char* field, const char* kind, Json* config,
              std::string* error) {
  Json list = Json::Array();
  for (const Declared& d : decls) {
    const DTypeInfo* dtype = FromGj(d.dtype);
    if (dtype == nullptr || d.rank < 0) {
      *error = std::string(kind) + " '" + d.name + "': the graph declares no " +
               (dtype == nullptr ? "dtype" : "shape") + "; list the " + kind +
               "s in config.pbtxt (or export with "
               "guardjit.export, which declares them)";
      return false;
    }
    Json t = Json::Object();
    t.Member("name") = Json::String(d.name);
    t.Member("data_type") = Json::String(dtype->config_name);
    Json dims = Json::Array();
    for (size_t k = batching ? 1 : 0; k < d.dims.size(); ++k) {
      dims.Append(Json::Int(d.dims[k]));
    }
    t.Member("dims") = std::move(dims);
    list.Append(std::move(t));
  }
  config->Member(field) = std::move(list);
  return true;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  }
  return out + "]";
}

bool CheckList(const std::vector<TensorConfig>& listed,
               const std::vector<Declared>& decls, bool batching,
               const char* kind, bool all_required, std::string* error) {
  for (const TensorConfig& t : listed) {
    const Declared* d = nullptr;
    for (const Declared& candidate : decls) {
      if (candidate.name == t.name) d = &candidate;
    }
    if (d == nullptr) {
      std::string names;
      for (const Declared& c : decls)
        names += (names.empty() ? "" : ", ") + c.name;
      *error = std::string("config ") + kind + " '" + t.name +
               "' is not one of the graph's (" + names + ")";
      return false;
    }
    const std::string what = std::string(kind) + " '" + t.name + "'";
    if (d->dtype != GJ_DTYPE_UNKNOWN && FromGj(d->dtype) != t.dtype) {
      const DTypeInfo* declared = FromGj(d->dtype);
      *error = what + ": config data_type " + t.dtype->config_name +
               ", the graph declares " +
               (declared != nullptr ? declared->config_name : "another type");
      return false;
    }
    if (d->rank >= 0) {
      const size_t offset = batching ? 1 : 0;
      if (d->rank != static_cast<int64_t>(t.dims.size() + offset)) {
        *error = what + ": config dims " + DimsText(t.dims) + " have rank " +
                 std::to_string(t.dims.size()) +
                 (batching ? " + the batch dim" : "") +
                 ", the graph declares rank " + std::to_string(d->rank);
        return false;
      }
      for (size_t k = 0; k < t.dims.size(); ++k) {
        const int64_t declared = d->dims[k + offset];
        if (declared >= 0 && t.dims[k] >= 0 && declared != t.dims[k]) {
          *error = what + ": config dims " + DimsText(t.dims) +
                   " disagree with the graph's size " +
                   std::to_string(declared) + " at dim " +
                   std::to_string(k + offset);
          return false;
        }
      }
    }
  }
  if (all_required) {
    for (const Declared& d : decls) {
      bool found = false;
      for (const TensorConfig& t : listed) found |= t.name == d.name;
      if (!found) {
        *error = std::string("the config lists no ") + kind + " '" + d.name +
                 "', which the graph takes";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

bool ParseModelConfig(const Json& config, ModelConfig* out,
                      std::string* error) {
  if (!config.is_object()) {
    *error = "the model config is not an object";
    return false;
  }
  if (const Json* name = config.Find("name");
      name != nullptr && name->is_string()) {
    out->name = name->AsString();
  }
  if (const Json* mbs = config.Find("max_batch_size"); mbs != nullptr) {
    if (!mbs->AsInt(&out->max_batch_size) || out->max_batch_size < 0) {
      *error = "max_batch_size is not a count";
      return false;
    }
  }
  if (const Json* f = config.Find("default_model_filename");
      f != nullptr && f->is_string()) {
    out->default_model_filename = f->AsString();
  }
  if (!ParseTensors(config, "input", &out->inputs, error) ||
      !ParseTensors(config, "output", &out->outputs, error)) {
    return false;
  }
  if (const Json* params = config.Find("parameters");
      params != nullptr && params->is_object()) {
    for (const auto& [key, value] : params->members()) {
      const Json* s = value.is_object() ? value.Find("string_value") : nullptr;
      out->parameters[key] =
          s != nullptr && s->is_string() ? s->AsString() : "";
    }
  }
  return ParseParameters(out, error);
}

bool AutoCompleteConfig(const gj_graph* graph, int64_t default_max_batch_size,
                        Json* config, bool* changed, std::string* error) {
  *changed = false;
  const std::vector<Declared> inputs = Declarations(graph, true);
  const std::vector<Declared> outputs = Declarations(graph, false);
  int64_t max_batch = 0;
  if (const Json* mbs = config->Find("max_batch_size")) mbs->AsInt(&max_batch);
  const bool has_inputs = HasList(*config, "input");
  const bool has_outputs = HasList(*config, "output");
  std::vector<Declared> all = inputs;
  all.insert(all.end(), outputs.begin(), outputs.end());
  if (max_batch == 0 && default_max_batch_size > 0 && !has_inputs &&
      !has_outputs && !BatchSymbol(all).empty()) {
    max_batch = default_max_batch_size;
    config->Member("max_batch_size") = Json::Int(max_batch);
    if (config->Find("dynamic_batching") == nullptr) {
      config->Member("dynamic_batching") = Json::Object();
    }
    *changed = true;
  }
  if (!has_inputs) {
    if (!FillList(inputs, max_batch > 0, "input", "input", config, error))
      return false;
    *changed = true;
  }
  if (!has_outputs) {
    if (!FillList(outputs, max_batch > 0, "output", "output", config, error)) {
      return false;
    }
    *changed = true;
  }
  return true;
}

bool CheckConfigAgainstGraph(const ModelConfig& config, const gj_graph* graph,
                             std::string* error) {
  const bool batching = config.max_batch_size > 0;
  return CheckList(config.inputs, Declarations(graph, true), batching, "input",
                   /*all_required=*/true, error) &&
         CheckList(config.outputs, Declarations(graph, false), batching,
                   "output", /*all_required=*/false, error);
}

}  // namespace guardjit_triton

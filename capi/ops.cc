// gj_list_ops: the op registry as JSON, with what runs each op.

#include <string>

#include "absl/strings/str_cat.h"
#include "capi/c_string.h"
#include "capi/error.h"
#include "core/status_macros.h"
#include "guardjit/guardjit.h"
#include "jit/lowering/op_support.h"

namespace guardjit::capi {
namespace {

// `text` as a JSON string literal.
std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      absl::StrAppend(&out, "\\", std::string(1, c));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, "\\u00", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

const char* Bool(bool b) { return b ? "true" : "false"; }

std::string OpsJson() {
  std::string out = "{\"ops\": [";
  bool first = true;
  for (const OpSupport& op : ListOpSupport()) {
    absl::StrAppend(&out, first ? "\n" : ",\n",
                    "  {\"target\": ", JsonString(op.target),
                    ", \"schema\": ", JsonString(op.schema),
                    ", \"reference_kernel\": ", Bool(op.reference_kernel),
                    ", \"cpu_lowering\": ", Bool(op.jit_lowering),
                    ", \"extern_step\": ", Bool(op.extern_step),
                    ", \"cuda_lowering\": ", Bool(op.jit_lowering), "}");
    first = false;
  }
  absl::StrAppend(&out, "\n]}\n");
  return out;
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

gj_error* gj_list_ops(char** out_json) {
  if (out_json != nullptr) *out_json = nullptr;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (out_json == nullptr) {
      return guardjit::capi::NullArgument("gj_list_ops", "out_json");
    }
    ASSIGN_OR_RETURN(*out_json,
                     guardjit::capi::NewCString(guardjit::capi::OpsJson()));
    return absl::OkStatus();
  });
}

}  // extern "C"

#include "core/io_spec.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {
namespace {

// A name from a file, quoted for a message: at most kMaxSymbolLength
// characters, non-printable bytes as '?'.
std::string Quoted(absl::string_view name) {
  std::string out = "'";
  for (size_t i = 0; i < name.size() && i < kMaxSymbolLength; ++i) {
    out += absl::ascii_isprint(name[i]) ? name[i] : '?';
  }
  if (name.size() > kMaxSymbolLength) out += "...";
  return out + "'";
}

}  // namespace

bool IoSpec::IsFullyStatic() const {
  if (!dtype.has_value() || !dims.has_value()) return false;
  for (const IoDim& d : *dims) {
    if (!d.is_static()) return false;
  }
  return true;
}

std::string IoSpec::ToString() const {
  std::string out(dtype ? DTypeName(*dtype) : "?");
  if (!dims) return out + "[*]";
  std::vector<std::string> parts;
  for (const IoDim& d : *dims) {
    if (d.is_static()) {
      parts.push_back(absl::StrCat(d.size));
    } else {
      parts.push_back(d.symbol.empty() ? "?" : d.symbol);
    }
  }
  return absl::StrCat(out, "[", absl::StrJoin(parts, ", "), "]");
}

bool IsValidSymbolName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxSymbolLength) return false;
  if (absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '.') return false;
  }
  return true;
}

absl::Status ValidateIoSpec(const IoSpec& spec, absl::string_view what) {
  if (!spec.dims) return absl::OkStatus();
  if (spec.dims->size() > static_cast<size_t>(kMaxIoRank)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": declared rank ", spec.dims->size(),
                     " is more than ", kMaxIoRank));
  }
  for (size_t k = 0; k < spec.dims->size(); ++k) {
    const IoDim& d = (*spec.dims)[k];
    if (d.size < -1) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": declared size ", d.size, " at dim ", k, " is negative"));
    }
    if (d.is_static() && !d.symbol.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": dim ", k, " has both the static size ", d.size,
                       " and the symbol ", Quoted(d.symbol)));
    }
    if (!d.symbol.empty() && !IsValidSymbolName(d.symbol)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": dim ", k, ": symbol ", Quoted(d.symbol),
          " is not an identifier (letters, digits, '_', '.', at most ",
          kMaxSymbolLength, " characters, not starting with a digit)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace guardjit

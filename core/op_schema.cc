#include "core/op_schema.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status SchemaError(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad op schema '", text, "': ", why));
}

// Splits on commas that are not nested in (), [] or quotes.
std::vector<absl::string_view> SplitTopLevel(absl::string_view s) {
  std::vector<absl::string_view> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\'') quoted = !quoted;
    if (quoted) continue;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(absl::StripAsciiWhitespace(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  absl::string_view last = absl::StripAsciiWhitespace(s.substr(start));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

// Removes alias annotations: "Tensor(a!)" -> "Tensor"; tuple parentheses
// ("(Tensor, Tensor)") stay.
std::string StripAlias(absl::string_view type) {
  std::string out;
  int skip_depth = 0;
  for (char c : type) {
    if (skip_depth > 0) {
      skip_depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      continue;
    }
    if (c == '(' && !out.empty() &&
        std::isalnum(static_cast<unsigned char>(out.back()))) {
      skip_depth = 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<Arg> ParseLiteral(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text == "None") return Arg::None();
  if (text == "True") return Arg::Bool(true);
  if (text == "False") return Arg::Bool(false);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'')) {
    return Arg::String(std::string(text.substr(1, text.size() - 2)));
  }
  if (text.size() >= 2 && text.front() == '[') {
    Arg::List items;
    for (absl::string_view item :
         SplitTopLevel(text.substr(1, text.size() - 2))) {
      ASSIGN_OR_RETURN(Arg a, ParseLiteral(item));
      items.push_back(std::move(a));
    }
    return Arg::OfList(std::move(items));
  }
  int64_t i;
  if (absl::SimpleAtoi(text, &i)) return Arg::Int(i);
  double d;
  if (absl::SimpleAtod(text, &d)) return Arg::Float(d);
  // Enum-like defaults (contiguous_format, long, ...) are kept as strings.
  return Arg::String(std::string(text));
}

struct TypeInfo {
  ArgType type;
  bool optional;
  int fixed_list_size;
  bool optional_elements = false;
};

absl::StatusOr<TypeInfo> ParseType(absl::string_view text,
                                   absl::string_view schema) {
  std::string t = StripAlias(text);
  TypeInfo info{ArgType::kAny, false, 0};
  if (!t.empty() && t.back() == '?') {
    info.optional = true;
    t.pop_back();
  }
  bool is_list = false;
  if (size_t lb = t.find('['); lb != std::string::npos) {
    absl::string_view n =
        absl::string_view(t).substr(lb + 1, t.size() - lb - 2);
    if (!n.empty() && !absl::SimpleAtoi(n, &info.fixed_list_size)) {
      return SchemaError(schema, absl::StrCat("bad list type '", text, "'"));
    }
    is_list = true;
    t = t.substr(0, lb);
    if (!t.empty() && t.back() == '?') {  // Tensor?[]
      t.pop_back();
      info.optional_elements = true;
    }
  }
  struct Named {
    absl::string_view name;
    ArgType scalar, list;
  };
  static constexpr Named kTypes[] = {
      {"Tensor", ArgType::kTensor, ArgType::kTensorList},
      {"Scalar", ArgType::kScalar, ArgType::kFloatList},
      {"int", ArgType::kInt, ArgType::kIntList},
      {"SymInt", ArgType::kInt, ArgType::kIntList},
      {"float", ArgType::kFloat, ArgType::kFloatList},
      {"bool", ArgType::kBool, ArgType::kBoolList},
      {"str", ArgType::kString, ArgType::kAny},
      {"ScalarType", ArgType::kScalarType, ArgType::kAny},
      {"Device", ArgType::kDevice, ArgType::kAny},
      {"Layout", ArgType::kLayout, ArgType::kAny},
      {"MemoryFormat", ArgType::kMemoryFormat, ArgType::kAny},
      {"Generator", ArgType::kGenerator, ArgType::kAny},
      {"Graph", ArgType::kGraph, ArgType::kAny},
      {"Any", ArgType::kAny, ArgType::kAny},
  };
  for (const Named& n : kTypes) {
    if (n.name == t) {
      info.type = is_list ? n.list : n.scalar;
      if (is_list && info.type == ArgType::kAny) break;
      return info;
    }
  }
  return SchemaError(schema, absl::StrCat("unknown type '", text, "'"));
}

}  // namespace

const char* ArgTypeName(ArgType type) {
  switch (type) {
    case ArgType::kTensor:
      return "Tensor";
    case ArgType::kTensorList:
      return "Tensor[]";
    case ArgType::kScalar:
      return "Scalar";
    case ArgType::kInt:
      return "int";
    case ArgType::kIntList:
      return "int[]";
    case ArgType::kFloat:
      return "float";
    case ArgType::kFloatList:
      return "float[]";
    case ArgType::kBool:
      return "bool";
    case ArgType::kBoolList:
      return "bool[]";
    case ArgType::kString:
      return "str";
    case ArgType::kScalarType:
      return "ScalarType";
    case ArgType::kDevice:
      return "Device";
    case ArgType::kLayout:
      return "Layout";
    case ArgType::kMemoryFormat:
      return "MemoryFormat";
    case ArgType::kGenerator:
      return "Generator";
    case ArgType::kGraph:
      return "Graph";
    case ArgType::kAny:
      return "Any";
  }
  return "?";
}

std::string OpSchema::QualifiedName(absl::string_view ns) const {
  return absl::StrCat(ns, ".", name, ".", overload);
}

int OpSchema::ArgIndex(absl::string_view arg_name) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

std::string OpSchema::ToString() const {
  std::vector<std::string> parts;
  bool star = false;
  for (const ArgSchema& a : args) {
    if (a.kwarg_only && !star) {
      parts.push_back("*");
      star = true;
    }
    std::string type = ArgTypeName(a.type);
    if (a.fixed_list_size > 0) {
      type = absl::StrCat(type.substr(0, type.size() - 2), "[",
                          a.fixed_list_size, "]");
    }
    if (a.optional_elements) {
      type = absl::StrCat(type.substr(0, type.size() - 2), "?[]");
    }
    parts.push_back(absl::StrCat(type, a.optional ? "?" : "", " ", a.name));
  }
  std::string ret =
      returns_list ? "Tensor[]"
      : num_returns == 1
          ? "Tensor"
          : absl::StrCat(
                "(",
                absl::StrJoin(std::vector<std::string>(num_returns, "Tensor"),
                              ", "),
                ")");
  return absl::StrCat(name,
                      overload == "default" ? "" : absl::StrCat(".", overload),
                      "(", absl::StrJoin(parts, ", "), ") -> ", ret);
}

absl::StatusOr<OpSchema> ParseOpSchema(absl::string_view text) {
  OpSchema schema;
  size_t lparen = text.find('(');
  size_t arrow = text.rfind("->");
  if (lparen == absl::string_view::npos || arrow == absl::string_view::npos) {
    return SchemaError(text, "expected 'name(args) -> returns'");
  }
  absl::string_view head = absl::StripAsciiWhitespace(text.substr(0, lparen));
  absl::ConsumePrefix(&head, "aten::");
  if (size_t dot = head.find('.'); dot != absl::string_view::npos) {
    schema.name = std::string(head.substr(0, dot));
    schema.overload = std::string(head.substr(dot + 1));
  } else {
    schema.name = std::string(head);
    schema.overload = "default";
  }
  size_t rparen = text.rfind(')', arrow);
  if (rparen == absl::string_view::npos || rparen < lparen) {
    return SchemaError(text, "unbalanced parentheses");
  }
  bool kwarg_only = false;
  for (absl::string_view part :
       SplitTopLevel(text.substr(lparen + 1, rparen - lparen - 1))) {
    if (part.empty()) continue;
    if (part == "*") {
      kwarg_only = true;
      continue;
    }
    ArgSchema arg;
    arg.kwarg_only = kwarg_only;
    absl::string_view decl = part;
    absl::string_view default_text;
    if (size_t eq = part.find('='); eq != absl::string_view::npos) {
      decl = absl::StripAsciiWhitespace(part.substr(0, eq));
      default_text = absl::StripAsciiWhitespace(part.substr(eq + 1));
    }
    size_t space = decl.rfind(' ');
    if (space == absl::string_view::npos) {
      return SchemaError(text,
                         absl::StrCat("argument '", part, "' has no name"));
    }
    arg.name = std::string(decl.substr(space + 1));
    ASSIGN_OR_RETURN(TypeInfo type, ParseType(decl.substr(0, space), text));
    arg.type = type.type;
    arg.optional = type.optional;
    arg.fixed_list_size = type.fixed_list_size;
    arg.optional_elements = type.optional_elements;
    if (!default_text.empty()) {
      ASSIGN_OR_RETURN(Arg def, ParseLiteral(default_text));
      if (arg.fixed_list_size > 0 && def.is_int()) {
        def = Arg::OfList(Arg::List(arg.fixed_list_size, def));
      }
      arg.default_value = std::move(def);
    }
    schema.args.push_back(std::move(arg));
  }
  std::string ret_text =
      StripAlias(absl::StripAsciiWhitespace(text.substr(arrow + 2)));
  absl::string_view ret = ret_text;
  if (ret == "Tensor[]") {
    schema.returns_list = true;
    schema.num_returns = 0;
  } else if (!ret.empty() && ret.front() == '(') {
    schema.num_returns =
        static_cast<int>(SplitTopLevel(ret.substr(1, ret.size() - 2)).size());
  } else if (ret == "()") {
    schema.num_returns = 0;
  } else {
    schema.num_returns = 1;
    schema.returns_int =
        ret == "SymInt" || ret == "SymBool" || ret == "int" || ret == "bool";
  }
  return schema;
}

}  // namespace guardjit

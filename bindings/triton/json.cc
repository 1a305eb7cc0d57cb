#include "bindings/triton/json.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace guardjit_triton {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  bool ParseDocument(Json* out, std::string* error) {
    if (!ParseValue(out, 0)) {
      *error = "offset " + std::to_string(pos_) + ": " + error_;
      return false;
    }
    SkipSpace();
    if (pos_ != text_.size()) {
      *error = "offset " + std::to_string(pos_) + ": trailing characters";
      return false;
    }
    return true;
  }

 private:
  bool Fail(const char* what) {
    error_ = what;
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
            text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  bool Consume(const char* word) {
    size_t n = 0;
    while (word[n] != '\0') ++n;
    if (text_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  bool ParseValue(Json* out, int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      std::string s;
      if (!ParseString(&s)) return false;
      *out = Json::String(std::move(s));
      return true;
    }
    if (Consume("true")) {
      *out = Json::Bool(true);
      return true;
    }
    if (Consume("false")) {
      *out = Json::Bool(false);
      return true;
    }
    if (Consume("null")) {
      *out = Json();
      return true;
    }
    return ParseNumber(out);
  }

  bool ParseNumber(Json* out) {
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' ||
            text_[pos_] == '+' || text_[pos_] == '-')) {
      ++pos_;
    }
    if (pos_ == start) return Fail("expected a value");
    const std::string digits = text_.substr(start, pos_ - start);
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) return Fail("bad number");
    *out = Json::Number(v);
    // Integers keep their exact text.
    if (digits.find_first_of(".eE") == std::string::npos) {
      errno = 0;
      const long long i = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == 0) *out = Json::Int(i);
    }
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return Fail("short \\u escape");
          const unsigned code = static_cast<unsigned>(
              std::strtoul(text_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          // UTF-8 of the code unit (surrogate pairs stay as two units: the
          // configs this reads are ASCII).
          if (code < 0x80) {
            out->push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out->push_back(static_cast<char>(0xC0 | (code >> 6)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out->push_back(static_cast<char>(0xE0 | (code >> 12)));
            out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default:
          return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }

  bool ParseArray(Json* out, int depth) {
    ++pos_;
    *out = Json::Array();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      Json item;
      if (!ParseValue(&item, depth + 1)) return false;
      out->Append(std::move(item));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }

  bool ParseObject(Json* out, int depth) {
    ++pos_;
    *out = Json::Object();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Fail("expected a member name");
      }
      std::string key;
      if (!ParseString(&key)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return Fail("expected ':'");
      ++pos_;
      Json value;
      if (!ParseValue(&value, depth + 1)) return false;
      out->Member(key) = std::move(value);
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  const std::string& text_;
  size_t pos_ = 0;
  std::string error_;
};

void QuoteTo(const std::string& s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace

Json Json::Bool(bool b) {
  Json j(Kind::kBool);
  j.bool_ = b;
  return j;
}

Json Json::Number(double v) {
  Json j(Kind::kNumber);
  j.number_ = v;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", std::isfinite(v) ? v : 0.0);
  j.string_ = buf;
  // A double stays one in the text ("1500.0"): AsInt reads integers only.
  if (j.string_.find_first_of(".eE") == std::string::npos) j.string_ += ".0";
  return j;
}

Json Json::Int(int64_t v) {
  Json j(Kind::kNumber);
  j.number_ = static_cast<double>(v);
  j.string_ = std::to_string(v);
  return j;
}

Json Json::String(std::string s) {
  Json j(Kind::kString);
  j.string_ = std::move(s);
  return j;
}

bool Json::Parse(const std::string& text, Json* out, std::string* error) {
  return Parser(text).ParseDocument(out, error);
}

bool Json::AsInt(int64_t* out) const {
  if (kind_ != Kind::kNumber && kind_ != Kind::kString) return false;
  if (string_.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(string_.c_str(), &end, 10);
  if (errno != 0 || end != string_.c_str() + string_.size()) return false;
  *out = v;
  return true;
}

const Json* Json::Find(const std::string& key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json* Json::Find(const std::string& key) {
  for (auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json& Json::Member(const std::string& key) {
  if (Json* found = Find(key)) return *found;
  members_.emplace_back(key, Json());
  return members_.back().second;
}

std::string Json::Serialize() const {
  std::string out;
  SerializeTo(&out);
  return out;
}

void Json::SerializeTo(std::string* out) const {
  switch (kind_) {
    case Kind::kNull:
      *out += "null";
      return;
    case Kind::kBool:
      *out += bool_ ? "true" : "false";
      return;
    case Kind::kNumber:
      *out += string_;
      return;
    case Kind::kString:
      QuoteTo(string_, out);
      return;
    case Kind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out->push_back(',');
        items_[i].SerializeTo(out);
      }
      out->push_back(']');
      return;
    case Kind::kObject:
      out->push_back('{');
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i > 0) out->push_back(',');
        QuoteTo(members_[i].first, out);
        out->push_back(':');
        members_[i].second.SerializeTo(out);
      }
      out->push_back('}');
      return;
  }
}

}  // namespace guardjit_triton

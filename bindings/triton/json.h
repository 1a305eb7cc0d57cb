#ifndef GUARDJIT_BINDINGS_TRITON_JSON_H_
#define GUARDJIT_BINDINGS_TRITON_JSON_H_

// The JSON Triton hands a backend (the model config) and takes back (an
// auto-completed config): a small DOM with a parser and a writer. The
// backend links no JSON library: one in a shared object loaded into
// tritonserver could clash with the server's own symbols.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace guardjit_triton {

class Json {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;
  static Json Bool(bool b);
  static Json Number(double v);
  static Json Int(int64_t v);
  static Json String(std::string s);
  static Json Array() { return Json(Kind::kArray); }
  static Json Object() { return Json(Kind::kObject); }

  // Parses `text`; false with *error ("offset 12: expected ':'") on malformed
  // input. Nesting deeper than 64 levels is refused.
  static bool Parse(const std::string& text, Json* out, std::string* error);
  std::string Serialize() const;

  Kind kind() const { return kind_; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_number() const { return kind_ == Kind::kNumber; }

  bool AsBool() const { return bool_; }
  // Numbers keep their text, so int64 values survive (Triton writes
  // int64 dims as numbers, some fields as strings of digits).
  double AsDouble() const { return number_; }
  // The value of a number or of a string of digits; false if neither.
  bool AsInt(int64_t* out) const;
  const std::string& AsString() const { return string_; }

  // Arrays.
  size_t size() const { return items_.size(); }
  const Json& operator[](size_t i) const { return items_[i]; }
  Json& operator[](size_t i) { return items_[i]; }
  void Append(Json v) { items_.push_back(std::move(v)); }

  // Objects (members in insertion order).
  const Json* Find(const std::string& key) const;
  Json* Find(const std::string& key);
  // The member `key`, added as null if absent.
  Json& Member(const std::string& key);
  const std::vector<std::pair<std::string, Json>>& members() const {
    return members_;
  }

 private:
  explicit Json(Kind kind) : kind_(kind) {}
  void SerializeTo(std::string* out) const;

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;  // kString; kNumber: the number's text
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_JSON_H_

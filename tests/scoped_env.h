// An environment variable set for a test's scope.

#ifndef GUARDJIT_TESTS_SCOPED_ENV_H_
#define GUARDJIT_TESTS_SCOPED_ENV_H_

#include <cstdlib>
#include <optional>
#include <string>

namespace guardjit::testing {

// Sets environment variable `name` to `value` for its lifetime, then restores
// what was there: e.g. GJ_LAYER_NORM_STEP=0 in tests of the layer norm's
// kernel lowering, which a host plan otherwise runs as the library's step.
// Switches that are read at plan time only (not cached at startup) work.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = std::string(old);
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved_.has_value()) {
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_SCOPED_ENV_H_

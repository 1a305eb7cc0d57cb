#ifndef GUARDJIT_BINDINGS_CLI_INPUT_SPEC_H_
#define GUARDJIT_BINDINGS_CLI_INPUT_SPEC_H_

// `--input NAME=DTYPE[d0,d1,...]:random|zeros|ones|v0,v1,...` and the host
// buffer it describes.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bindings/cli/dtype.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {

struct InputSpec {
  enum class Fill { kRandom, kZeros, kOnes, kValues };
  std::string name;
  const DTypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  Fill fill = Fill::kRandom;
  std::vector<double> values;  // kValues: one value, or one per element
};

// Parses `text`; on failure returns false with `*error` saying what is wrong.
bool ParseInputSpec(const std::string& text, InputSpec* spec,
                    std::string* error);

// A contiguous CPU tensor the CLI owns, filled as its spec says.
class HostTensor {
 public:
  HostTensor(const InputSpec& spec, std::mt19937_64& rng);
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  const DLTensor* dl() const { return &dl_; }

 private:
  std::vector<int64_t> shape_;
  std::vector<uint64_t> storage_;  // 8-byte aligned for every dtype
  DLTensor dl_;
};

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_INPUT_SPEC_H_

#include "runtime/program/live_programs.h"

#include <memory>
#include <mutex>
#include <utility>

#include "runtime/program/step_runner.h"

namespace guardjit {

LivePrograms::Registration::Registration(std::shared_ptr<LivePrograms> registry,
                                         const Program* program)
    : registry_(std::move(registry)), program_(program) {
  std::lock_guard<std::mutex> lock(registry_->mu_);
  registry_->programs_.insert(program_);
}

LivePrograms::Registration::~Registration() {
  std::lock_guard<std::mutex> lock(registry_->mu_);
  registry_->programs_.erase(program_);
}

std::unique_ptr<LivePrograms::Registration> LivePrograms::Add(
    const Program& program) {
  return std::make_unique<Registration>(shared_from_this(), &program);
}

int64_t LivePrograms::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(programs_.size());
}

int64_t LivePrograms::PackedBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t bytes = 0;
  for (const Program* program : programs_)
    bytes += guardjit::PackedBytes(*program);
  return bytes;
}

int64_t PackedBytes(const Program& program) {
  int64_t bytes = 0;
  for (const ProgramStep& step : program.steps) {
    if (step.runner != nullptr) bytes += step.runner->packed_bytes();
  }
  return bytes;
}

}  // namespace guardjit

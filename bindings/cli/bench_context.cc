#include "bindings/cli/bench_context.h"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

namespace guardjit_cli {
namespace {

// The first line of a small file; "" if it cannot be read.
std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// ISO 8601 with a colon in the offset, as Google Benchmark writes it.
std::string LocalDateTime() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[64];
  const size_t n =
      std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S%z", &local);
  std::string text(buffer, n);
  if (text.size() >= 5) text.insert(text.size() - 2, ":");
  return text;
}

int64_t CpuMhz() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    return std::llround(std::strtod(line.c_str() + colon + 1, nullptr));
  }
  const std::string khz =
      ReadLine("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  return khz.empty() ? 0
                     : std::llround(std::strtod(khz.c_str(), nullptr) / 1e3);
}

// Bits set in a sysfs CPU mask ("00000003" or "00000000,00000003").
int64_t CountCpus(const std::string& mask) {
  int64_t count = 0;
  for (char c : mask) {
    if (c == ',') continue;
    const int nibble =
        std::isdigit(static_cast<unsigned char>(c))
            ? c - '0'
            : (std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    if (nibble >= 0 && nibble < 16) count += __builtin_popcount(nibble);
  }
  return count;
}

std::vector<CpuCache> Caches() {
  std::vector<CpuCache> caches;
  for (int index = 0;; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" +
                            std::to_string(index) + "/";
    CpuCache cache;
    cache.type = ReadLine(dir + "type");
    if (cache.type.empty()) break;
    cache.level = std::atoll(ReadLine(dir + "level").c_str());
    const std::string size = ReadLine(dir + "size");  // "32K"
    cache.size = std::atoll(size.c_str());
    if (!size.empty() && size.back() == 'K') cache.size *= 1024;
    if (!size.empty() && size.back() == 'M') cache.size *= 1024 * 1024;
    cache.num_sharing = CountCpus(ReadLine(dir + "shared_cpu_map"));
    caches.push_back(cache);
  }
  return caches;
}

}  // namespace

BenchContext HostContext(const std::string& executable) {
  BenchContext context;
  context.date = LocalDateTime();
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) context.host_name = host;
  context.executable = executable;
  context.num_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  context.mhz_per_cpu = CpuMhz();
  const std::string governor =
      ReadLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  context.cpu_scaling_enabled = !governor.empty() && governor != "performance";
  context.caches = Caches();
  double load[3];
  const int n = getloadavg(load, 3);
  for (int i = 0; i < n; ++i) context.load_avg.push_back(load[i]);
#ifdef NDEBUG
  context.library_build_type = "release";
#else
  context.library_build_type = "debug";
#endif
  return context;
}

}  // namespace guardjit_cli

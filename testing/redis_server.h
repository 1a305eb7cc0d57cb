#ifndef GUARDJIT_TESTING_REDIS_SERVER_H_
#define GUARDJIT_TESTING_REDIS_SERVER_H_

// A real redis-server (Debian's package) for tests and benchmarks, started
// on a free loopback port and stopped by its pid; and a "server" that
// accepts connections and never answers, for the timeout tests.

#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>

namespace guardjit {

class RedisServer {
 public:
  // Starts redis-server (from PATH) without persistence; ok() false, with
  // error() saying why, when it cannot.
  RedisServer();
  ~RedisServer() { Stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  std::string url() const;
  // SIGTERM and wait; idempotent.
  void Stop();

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string error_;
};

// Listens on a loopback port, accepts every connection and never replies.
class SilentServer {
 public:
  SilentServer();
  ~SilentServer();
  int port() const { return port_; }
  std::string url(int timeout_ms) const;

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A loopback port nothing listens on now.
int FreeLoopbackPort();

}  // namespace guardjit

#endif  // GUARDJIT_TESTING_REDIS_SERVER_H_

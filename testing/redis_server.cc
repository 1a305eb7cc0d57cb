#include "testing/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace guardjit {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

bool Connectable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(port);
  const bool ok =
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

RedisServer::RedisServer() {
  for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) {
    port_ = FreeLoopbackPort();
    const std::string port = std::to_string(port_);
    const pid_t pid = ::fork();
    if (pid < 0) {
      error_ = "fork failed";
      return;
    }
    if (pid == 0) {
      std::vector<const char*> argv = {
          "redis-server", "--port",     port.c_str(), "--bind",
          "127.0.0.1",    "--save",     "",           "--appendonly",
          "no",           "--loglevel", "warning",    nullptr};
      ::execvp("redis-server", const_cast<char* const*>(argv.data()));
      ::_exit(127);
    }
    // Up when it accepts connections (a few ms), gone if it exited.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        error_ = WIFEXITED(status) && WEXITSTATUS(status) == 127
                     ? "redis-server is not installed (scripts/setup.sh "
                       "installs Debian's redis-server)"
                     : "redis-server exited at start";
        break;
      }
      if (Connectable(port_)) {
        pid_ = pid;
        break;
      }
      ::usleep(10000);
    }
    if (pid_ <= 0 && error_.find("not installed") != std::string::npos) return;
  }
}

std::string RedisServer::url() const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/0";
}

void RedisServer::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

SilentServer::SilentServer() {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(0);
  ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::listen(fd_, 16);
  socklen_t len = sizeof(addr);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] {
    std::vector<int> held;  // accepted, never answered
    while (!stop_.load()) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) held.push_back(c);
      }
    }
    for (int c : held) ::close(c);
  });
}

SilentServer::~SilentServer() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
}

std::string SilentServer::url(int timeout_ms) const {
  return "redis://127.0.0.1:" + std::to_string(port_) +
         "/0?timeout_ms=" + std::to_string(timeout_ms);
}

}  // namespace guardjit

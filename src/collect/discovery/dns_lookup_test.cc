// dns_lookup against a real DNS server: Debian's dnsmasq on a loopback port, answering from a
// hosts file (A/AAAA, re-read on SIGHUP) and --srv-host records; and against a server that never
// answers.

#include "collect/discovery/dns_lookup.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace rolter {
namespace {

using std::chrono::milliseconds;

// 127.0.0.1:port.
sockaddr_in loopback(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

// A UDP port on 127.0.0.1 that was free a moment ago, or (with `keep`) a bound socket that never
// answers.
uint16_t udp_port(int* keep = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address = loopback(0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  if (keep != nullptr) {
    *keep = fd;
  } else {
    ::close(fd);
  }
  return ntohs(address.sin_port);
}

const char* dnsmasq_path() {
  for (const char* path : {"/usr/sbin/dnsmasq", "/sbin/dnsmasq"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return nullptr;
}

// True when something accepts TCP connections on 127.0.0.1:port.
bool tcp_listening(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(port);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

// A port on 127.0.0.1 free for both UDP and TCP a moment ago (dnsmasq binds both).
uint16_t udp_and_tcp_port() {
  for (;;) {
    const uint16_t port = udp_port();
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(port);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    if (free) return port;
  }
}

// dnsmasq for the test's names (rolter.test), answering from a hosts file. The constructor returns
// once dnsmasq listens; when another process took the port first, dnsmasq exits and is started
// again on another.
class Dnsmasq {
 public:
  explicit Dnsmasq(const std::string& hosts) {
    hosts_path_ = ::testing::TempDir() + "rolter-dns-hosts-" + std::to_string(::getpid());
    write_hosts(hosts);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      port_ = udp_and_tcp_port();
      pid_ = start(port_);
      if (listening_by(deadline)) return;
    }
    ADD_FAILURE() << "dnsmasq did not start listening within 10 s";
  }
  ~Dnsmasq() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    ::unlink(hosts_path_.c_str());
  }

  std::string resolver() const { return "127.0.0.1:" + std::to_string(port_); }

  // Rewrites the hosts file and has dnsmasq read it again.
  void change_hosts(const std::string& hosts) {
    write_hosts(hosts);
    ::kill(pid_, SIGHUP);
  }

 private:
  void write_hosts(const std::string& hosts) { std::ofstream(hosts_path_) << hosts; }

  // Waits until dnsmasq accepts on port_. False when it exited first (another process took the
  // port) or the deadline passed; either way it is gone and pid_ is -1.
  bool listening_by(std::chrono::steady_clock::time_point deadline) {
    while (!tcp_listening(port_)) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {  // reaped: not ours to signal any more
        pid_ = -1;
        return false;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return true;
  }

  pid_t start(uint16_t port) const {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string port_flag = "--port=" + std::to_string(port);
      const std::string addn = "--addn-hosts=" + hosts_path_;
      ::execl(dnsmasq_path(), "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
              "--no-resolv", "--no-hosts", "--listen-address=127.0.0.1", "--bind-interfaces",
              "--pid-file=", "--local=/rolter.test/", "--log-facility=-", "--quiet-dhcp",
              port_flag.c_str(), addn.c_str(),
              "--srv-host=_http._tcp.srv.rolter.test,engine-a.rolter.test,8001",
              "--srv-host=_http._tcp.srv.rolter.test,engine-b.rolter.test,8002",
              "--srv-host=_http._tcp.dangling.rolter.test,nowhere.rolter.test,8003",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }

  std::string hosts_path_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

DiscoverSpec spec_of(const std::string& url) {
  auto spec = parse_discover(url);
  EXPECT_TRUE(spec) << url;
  return spec.value_or(DiscoverSpec{});
}

// Looks up until the answer is `expected`, for up to 10 s (dnsmasq starts, or re-reads its hosts).
tl::expected<std::vector<DiscoveredAddress>, std::string> lookup_until(
    const DiscoverSpec& spec, const std::string& resolver,
    const std::vector<DiscoveredAddress>& expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    auto found = dns_lookup(spec, resolver, milliseconds(1000));
    if (found) std::sort(found->begin(), found->end());
    if ((found && *found == expected) || std::chrono::steady_clock::now() > deadline) return found;
    std::this_thread::sleep_for(milliseconds(50));
  }
}

class DnsLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(dnsmasq_path(), nullptr) << "dnsmasq is not installed (Debian: dnsmasq-base)";
  }
};

TEST_F(DnsLookupTest, EveryAddressRecordIsAnInstanceAtThePort) {
  Dnsmasq dns(
      "127.0.0.2 engines.rolter.test\n"
      "127.0.0.3 engines.rolter.test\n"
      "fd00::7 engines.rolter.test\n");
  const std::vector<DiscoveredAddress> all{
      {"127.0.0.2", 8000}, {"127.0.0.3", 8000}, {"fd00::7", 8000}};
  auto found = lookup_until(spec_of("dns://engines.rolter.test:8000"), dns.resolver(), all);
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ(*found, all);

  // A record removed, then another added: each lookup gives the server's set of the moment.
  dns.change_hosts("127.0.0.3 engines.rolter.test\n127.0.0.4 engines.rolter.test\n");
  const std::vector<DiscoveredAddress> changed{{"127.0.0.3", 8000}, {"127.0.0.4", 8000}};
  found = lookup_until(spec_of("dns://engines.rolter.test:8000"), dns.resolver(), changed);
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ(*found, changed);
}

TEST_F(DnsLookupTest, SrvRecordsGiveEachTargetsAddressesAtItsPort) {
  Dnsmasq dns("127.0.0.4 engine-a.rolter.test\n127.0.0.5 engine-b.rolter.test\n");
  const std::vector<DiscoveredAddress> both{{"127.0.0.4", 8001}, {"127.0.0.5", 8002}};
  auto found = lookup_until(spec_of("dns+srv://_http._tcp.srv.rolter.test"), dns.resolver(), both);
  ASSERT_TRUE(found) << found.error();
  EXPECT_EQ(*found, both);

  // Records whose targets have no address: no instance, and an error rather than an empty set.
  auto dangling = dns_lookup(spec_of("dns+srv://_http._tcp.dangling.rolter.test"), dns.resolver(),
                             milliseconds(1000));
  ASSERT_FALSE(dangling);
  EXPECT_NE(dangling.error().find("nowhere.rolter.test"), std::string::npos) << dangling.error();
}

TEST_F(DnsLookupTest, AnUnknownNameIsAnErrorNamingIt) {
  Dnsmasq dns("127.0.0.2 engines.rolter.test\n");
  ASSERT_TRUE(
      lookup_until(spec_of("dns://engines.rolter.test:80"), dns.resolver(), {{"127.0.0.2", 80}}));
  auto found =
      dns_lookup(spec_of("dns://missing.rolter.test:80"), dns.resolver(), milliseconds(1000));
  ASSERT_FALSE(found);
  EXPECT_NE(found.error().find("missing.rolter.test"), std::string::npos) << found.error();
}

TEST(DnsLookup, AServerThatNeverAnswersFailsByTheDeadline) {
  int silent = -1;
  const uint16_t port = udp_port(&silent);  // bound, never read
  const auto began = std::chrono::steady_clock::now();
  auto found = dns_lookup(spec_of("dns://engines.rolter.test:80"),
                          "127.0.0.1:" + std::to_string(port), milliseconds(600));
  const auto took = std::chrono::steady_clock::now() - began;
  ::close(silent);
  ASSERT_FALSE(found);
  // A deadline, not a speed: the lookup gives up instead of waiting for ever.
  EXPECT_LT(took, std::chrono::seconds(10)) << found.error();
}

TEST(DnsLookup, TheSystemResolverReadsTheHostsFile) {
  // localhost is in every /etc/hosts; no DNS server is asked for it.
  auto found = dns_lookup(spec_of("dns://localhost:8000"), "", milliseconds(2000));
  ASSERT_TRUE(found) << found.error();
  bool loopback = false;
  for (const auto& a : *found) loopback |= a.host == "127.0.0.1" || a.host == "::1";
  EXPECT_TRUE(loopback);
}

}  // namespace
}  // namespace rolter

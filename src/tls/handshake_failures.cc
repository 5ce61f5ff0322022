#include "tls/handshake_failures.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "observe/metrics.h"

namespace rolter {

HandshakeFailures HandshakeFailures::registered(Metrics& metrics) {
  auto& family = prometheus::BuildCounter()
                     .Name("rolter_tls_handshake_failures_total")
                     .Help("TLS handshakes on the listener that failed (error) or timed out")
                     .Register(metrics.registry());
  HandshakeFailures failures;
  failures.error_ = &family.Add({{"reason", "error"}});
  failures.timeout_ = &family.Add({{"reason", "timeout"}});
  return failures;
}

void HandshakeFailures::count(bool timed_out) const {
  prometheus::Counter* counter = timed_out ? timeout_ : error_;
  if (counter != nullptr) counter->Increment();
}

}  // namespace rolter

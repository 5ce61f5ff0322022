// rolter_tls_handshake_failures_total{reason}: TLS handshakes on the listener that did not finish,
// because the client spoke something else (plain HTTP, a scanner's garbage, an unsupported
// version, a certificate it refused: reason="error") or said nothing in time (reason="timeout").
//
//   HandshakeFailures failures = HandshakeFailures::registered(metrics);  // once, at start-up
//   failures.count(/*timed_out=*/false);                                  // on a worker
//
// Thread-safety: registered() once, before the listener starts; count() from any thread (the
// counters are atomic). A default-constructed value counts nothing.
#pragma once

namespace prometheus {
class Counter;
}  // namespace prometheus

namespace rolter {

class Metrics;

class HandshakeFailures {
 public:
  HandshakeFailures() = default;
  // Adds the family to the metrics' registry, with both series at 0.
  static HandshakeFailures registered(Metrics& metrics);

  void count(bool timed_out) const;

 private:
  prometheus::Counter* error_ = nullptr;
  prometheus::Counter* timeout_ = nullptr;
};

}  // namespace rolter

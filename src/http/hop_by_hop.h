// Hop-by-hop headers (RFC 9110 §7.6.1): the fields that describe one connection, never forwarded.
//
// A message's hop-by-hop set is a fixed list (Connection, Keep-Alive, TE, Upgrade, ...) plus every
// field the message's own `Connection` header names. The proxy strips that set in both directions:
// requests going upstream and responses going to the client.
//
//   ConnectionOptions options;
//   for (auto& f : fields) if (iequals(f.name_string(), "connection")) options.add(f.value());
//   for (auto& f : fields) if (!options.is_hop_by_hop(f.name_string())) forward(f);
//
// Thread-safety: a value type; one thread at a time. It views the header values it was given,
// which must outlive it.
#pragma once

#include <boost/container/small_vector.hpp>

#include <string_view>

namespace rolter {

// True for the fields that are hop-by-hop whatever the Connection header says.
bool is_fixed_hop_by_hop(std::string_view name);

class ConnectionOptions {
 public:
  // Adds the comma-separated tokens of one `Connection` field value.
  void add(std::string_view connection_value);

  // Whether `name` is hop-by-hop for this message: a fixed one, or named in Connection.
  bool is_hop_by_hop(std::string_view name) const;

  // Collects the Connection tokens of a Beast fields container (or anything iterable the same way).
  template <typename Fields>
  static ConnectionOptions of(const Fields& fields) {
    ConnectionOptions options;
    for (const auto& field : fields) {
      if (is_connection(field.name_string())) options.add(field.value());
    }
    return options;
  }

 private:
  static bool is_connection(std::string_view name);
  // Eight options fit inline; real messages name one or two ("keep-alive", "close", "upgrade").
  boost::container::small_vector<std::string_view, 8> tokens_;
};

}  // namespace rolter

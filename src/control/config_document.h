// The effective configuration a control plane publishes (SPEC §10): the tables of its rolter.toml
// (read-only through the API) followed by the store's entities and the adaptive-routing policy,
// written out as one rolter.toml document. Gateways load that document exactly as they would load
// a file, so every write the API accepts is validated by the same code as `rolter check`.
//
// Sections that only make sense on the control plane's own machine ([store], [tls]) are left out
// of the published document. A validation error of the merged document is traced back to the
// entity it concerns, so the API can name the field (`targets[0].provider`) in its answer.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/loader.h"
#include "store/store.h"

namespace rolter {

// Where each array element of the document came from, in document order.
struct DocumentOrigin {
  EntityKind kind;
  std::string name;
  bool from_file = false;
};

struct ConfigDocument {
  std::string text;  // a complete rolter.toml
  std::vector<DocumentOrigin> origins;
};

// The TOML array that holds entities of `kind`, and the key that names one.
std::string_view entity_array(EntityKind kind);
std::string_view entity_name_key(EntityKind kind);

// Merges `file_text` (a rolter.toml; empty = none), `entities` and `adaptive_policy` (a JSON
// object of [adaptive_routing] keys; "" = the file's). Fails with a message when the file or an
// entity cannot be written as TOML (the file was validated before, so that is a store problem).
tl::expected<ConfigDocument, std::string> build_document(std::string_view file_text,
                                                         const std::vector<Entity>& entities,
                                                         const std::string& adaptive_policy);

// An error of the merged document, told against its origin.
struct TracedError {
  std::optional<DocumentOrigin> origin;  // absent: not inside an entity (e.g. [adaptive_routing])
  std::string field;                     // the key inside the entity, or the document's key
  std::string message;
};
TracedError trace_error(const ConfigError& error, const std::vector<DocumentOrigin>& origins);

}  // namespace rolter

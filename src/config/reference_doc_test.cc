// docs/configuration.md against the schema: the reference lists exactly the keys the schema walker
// reads, each with the type the walker expects, a default and a meaning.
//
// The schema's keys come from the code, not from a list kept by hand: testing/every_table.toml
// holds every table and array of tables, the walker asks for every key of each table it reads
// whether the key is set or not (checked below, on the same file stripped of its values), and a
// KeyRecorder notes each key it asks for. A key added to schema.cc without its row fails here, and
// so does a row whose key the schema no longer reads.

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/key_recorder.h"
#include "config/loader.h"
#include "config/schema.h"
#include "config/testing/load_fixture.h"
#include "config/testing/reference_rows.h"

namespace rolter::config_internal {
namespace {

constexpr const char* kReference = ROLTER_CONFIG_REFERENCE;   // docs/configuration.md
constexpr const char* kEveryTable = ROLTER_EVERY_TABLE_TOML;  // testing/every_table.toml

using Keys = std::map<std::string, KeyKind, std::less<>>;

std::string read_text(const char* path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_table(KeyKind kind) { return kind == KeyKind::kTable || kind == KeyKind::kTableArray; }

bool is_named_entry(std::string_view path) {
  return path == "*" || (path.size() > 2 && path.substr(path.size() - 2) == ".*");
}

struct Walk {
  Keys keys;  // every path the walker asked for
  ConfigErrors errors;
};

Walk walk(const toml::table& root) {
  Diagnostics diag(kEveryTable);
  KeyRecorder recorder;
  diag.record_keys_to(&recorder);
  read_config(root, diag);
  return Walk{recorder.keys(), diag.take_errors()};
}

const toml::table& every_table() {
  static const toml::table root = toml::parse_file(kEveryTable);
  return root;
}

// What the schema reads, walked once for every test.
const Walk& schema() {
  static const Walk result = walk(every_table());
  return result;
}

// The keys that hold values (the rows of the reference), with their kinds.
Keys value_keys(const Keys& keys) {
  Keys out;
  for (const auto& [path, kind] : keys) {
    if (!is_table(kind)) out.emplace(path, kind);
  }
  return out;
}

// Every key path of `table` under `path`, as the recorder writes them: "[]" for the elements of
// an array of tables, "*" for the keys of a table whose keys are names.
void paths_of(const toml::table& table, const std::string& path, const Keys& schema_keys,
              std::set<std::string>& out) {
  const bool named = schema_keys.count(path.empty() ? "*" : path + ".*") != 0;
  for (const auto& [key, node] : table) {
    const std::string at = named ? path + ".*" : child_path(path, key.str());
    out.insert(at);
    if (const toml::table* sub = node.as_table()) {
      paths_of(*sub, at, schema_keys, out);
    } else if (node.is_array_of_tables()) {
      for (const toml::node& element : *node.as_array()) {
        paths_of(*element.as_table(), at + "[]", schema_keys, out);
      }
    }
  }
}

// `table` with every value removed: only its tables and arrays of tables remain, empty.
toml::table skeleton(const toml::table& table) {
  toml::table out;
  for (const auto& [key, node] : table) {
    if (const toml::table* sub = node.as_table()) {
      out.insert(key, skeleton(*sub));
    } else if (node.is_array_of_tables()) {
      toml::array elements;
      for (const toml::node& element : *node.as_array()) {
        elements.push_back(skeleton(*element.as_table()));
      }
      out.insert(key, std::move(elements));
    }
  }
  return out;
}

std::string rule() {
  return "Rows of docs/configuration.md: | `full.dotted[].path` | type | default | meaning |\n";
}

TEST(ConfigReference, DocumentsEveryKeyTheSchemaReadsAndNoOther) {
  const Keys keys = value_keys(schema().keys);
  ASSERT_FALSE(keys.empty());
  const std::vector<ReferenceRow> rows = reference_rows(read_text(kReference));

  std::map<std::string, uint32_t> documented;  // key -> line of its first row
  for (const ReferenceRow& row : rows) documented.emplace(row.key, row.line);

  std::string missing;
  for (const auto& [path, kind] : keys) {
    if (documented.count(path) == 0) {
      missing += "  | `" + path + "` | " + std::string(kind_name(kind)) + " | ? | ? |\n";
    }
  }
  std::string extra;
  for (const auto& [path, line] : documented) {
    if (keys.count(path) == 0) {
      extra += "  docs/configuration.md:" + std::to_string(line) + ": `" + path + "`\n";
    }
  }
  EXPECT_TRUE(missing.empty())
      << "Keys the schema reads that docs/configuration.md does not document "
         "(add their rows):\n"
      << missing << rule();
  EXPECT_TRUE(extra.empty())
      << "Rows of docs/configuration.md that name no key of the schema (remove "
         "them, or fix the key):\n"
      << extra << rule();
}

TEST(ConfigReference, EveryRowGivesTheKeysTypeADefaultAndAMeaning) {
  const Keys& keys = schema().keys;
  const std::vector<ReferenceRow> rows = reference_rows(read_text(kReference));
  ASSERT_FALSE(rows.empty()) << "no | Key | Type | Default | Meaning | table in " << kReference;
  std::set<std::string> seen;
  for (const ReferenceRow& row : rows) {
    SCOPED_TRACE("docs/configuration.md:" + std::to_string(row.line) + ": `" + row.key + "`");
    EXPECT_EQ(row.cells, 4u) << "a row has 4 cells; escape a | inside one as \\|";
    EXPECT_NE(row.key, "") << "the Key cell is one code span holding the key's full path";
    EXPECT_TRUE(seen.insert(row.key).second) << "documented twice";
    EXPECT_NE(row.default_value, "") << "say the default; \"—\" when unset means off or none";
    EXPECT_NE(row.meaning, "");
    if (auto it = keys.find(row.key); it != keys.end()) {
      EXPECT_EQ(row.type, kind_name(it->second)) << "the walker reads it as such";
    }
  }
}

TEST(ConfigReferenceFixture, IsAValidConfig) {
  auto loaded = load_config_file(kEveryTable);
  ASSERT_TRUE(loaded) << dump(loaded.error());
}

TEST(ConfigReferenceFixture, ReachesEveryTableOfTheSchema) {
  const Walk& walked = schema();
  EXPECT_TRUE(walked.errors.empty()) << dump(walked.errors);

  // A table the walker asked for but never read a key of is absent from the fixture, and so are
  // the keys it holds: the enumeration would be incomplete.
  auto any_under = [&](const std::string& prefix) {
    auto it = walked.keys.lower_bound(prefix);
    return it != walked.keys.end() && it->first.rfind(prefix, 0) == 0;
  };
  std::string unreached;
  for (const auto& [path, kind] : walked.keys) {
    if (is_table(kind) && !any_under(path + ".") && !any_under(path + "[]."))
      unreached += "  " + path + " (" + std::string(kind_name(kind)) + ")\n";
  }
  EXPECT_TRUE(unreached.empty())
      << "testing/every_table.toml lacks these tables, with at least one "
         "key each:\n"
      << unreached;

  // And every key of the fixture is one the walker asked for.
  std::set<std::string> in_fixture;
  paths_of(every_table(), "", walked.keys, in_fixture);
  std::string unknown;
  for (const std::string& path : in_fixture) {
    if (walked.keys.count(path) == 0) unknown += "  " + path + "\n";
  }
  EXPECT_TRUE(unknown.empty()) << "keys of testing/every_table.toml the schema does not read:\n"
                               << unknown;
}

// The enumeration is complete only if no key is asked for on a condition (another key set, a
// mode): the walk of the fixture with every value removed must ask for the same keys.
TEST(SchemaWalker, AsksForEveryKeyOfATableWhetherSetOrNot) {
  const Walk bare = walk(skeleton(every_table()));
  std::string only_when_set;
  for (const auto& [path, kind] : schema().keys) {
    if (!is_named_entry(path) && bare.keys.count(path) == 0) only_when_set += "  " + path + "\n";
  }
  EXPECT_TRUE(only_when_set.empty())
      << "keys the walker asks for only when other keys are set (read "
         "each key of a table whenever the table is read):\n"
      << only_when_set;
}

TEST(KeyRecorder, WritesPathsWithoutIndices) {
  EXPECT_EQ(without_indices("routes[3].targets[10].cost.input"), "routes[].targets[].cost.input");
  EXPECT_EQ(without_indices("server.listen"), "server.listen");
  EXPECT_EQ(without_indices("providers[0].headers.\"x[1]\""), "providers[].headers.\"x[1]\"");
  KeyRecorder recorder;
  recorder.record("keys[0].budget", KeyKind::kTable);
  recorder.record("keys[1].budget", KeyKind::kTable);
  recorder.record("keys[1].budget.usd", KeyKind::kNumber);
  EXPECT_EQ(recorder.keys(),
            (Keys{{"keys[].budget", KeyKind::kTable}, {"keys[].budget.usd", KeyKind::kNumber}}));
}

TEST(KeyRecorder, NotesKeysOfNamedTablesAsOne) {
  toml::table root = toml::parse(R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:1"
[providers.headers]
api-key = "x"
api-version = "y"
)");
  const Keys keys = walk(root).keys;
  EXPECT_EQ(keys.count("providers[].headers.*"), 1u);
  EXPECT_EQ(keys.count("providers[].headers.api-key"), 0u);
}

TEST(ReferenceRows, ReadsOnlyKeyTables) {
  const auto rows = reference_rows(R"(# Title
| key | meaning |
|---|---|
| `not.this` | another table |

| Key | Type | Default | Meaning |
|---|---|---|---|
| `a.b` | string | `""` | one \| two |
| a.c | integer | `1` | not a code span |

```
| `in.code` | string | — | a code block |
```
| `after.table` | string | — | the table ended at the blank line |
)");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "a.b");
  EXPECT_EQ(rows[0].line, 8u);
  EXPECT_EQ(rows[0].type, "string");
  EXPECT_EQ(rows[0].default_value, "`\"\"`");
  EXPECT_EQ(rows[0].meaning, "one | two");
  EXPECT_EQ(rows[0].cells, 4u);
  EXPECT_EQ(rows[1].key, "");
}

}  // namespace
}  // namespace rolter::config_internal

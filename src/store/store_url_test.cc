#include "store/store_url.h"

#include <gtest/gtest.h>

namespace rolter {
namespace {

TEST(StoreUrl, ParsesEachForm) {
  struct Case {
    std::string url;
    StoreBackend backend;
    std::string target;
  };
  const Case cases[] = {
      {"sqlite:rolter.db", StoreBackend::kSqlite, "rolter.db"},
      {"sqlite:/var/lib/rolter/rolter.db", StoreBackend::kSqlite, "/var/lib/rolter/rolter.db"},
      {"sqlite://data/rolter.db", StoreBackend::kSqlite, "data/rolter.db"},
      {"sqlite:///var/lib/rolter.db", StoreBackend::kSqlite, "/var/lib/rolter.db"},
      {"sqlite::memory:", StoreBackend::kSqlite, ":memory:"},
      {"SQLite:x.db", StoreBackend::kSqlite, "x.db"},
      {"postgres://u@db/rolter", StoreBackend::kPostgres, "postgres://u@db/rolter"},
      {"postgresql:///rolter?host=/run/pg", StoreBackend::kPostgres,
       "postgresql:///rolter?host=/run/pg"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.url);
    auto parsed = parse_store_url(c.url);
    ASSERT_TRUE(parsed) << parsed.error();
    EXPECT_EQ(parsed->backend, c.backend);
    EXPECT_EQ(parsed->target, c.target);
  }
}

TEST(StoreUrl, RejectsOtherSchemesWithoutShowingThePassword) {
  const std::pair<std::string, std::string> cases[] = {
      {"mysql://x", "not supported"},
      {"mysql://ops:hunter2@db/rolter", "mysql://ops:***@db/rolter"},
      {"sqlite:", "names no file"},
      {"", "not supported"},
  };
  for (const auto& [url, fragment] : cases) {
    SCOPED_TRACE(url);
    auto parsed = parse_store_url(url);
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().find(fragment), std::string::npos) << parsed.error();
    EXPECT_EQ(parsed.error().find("hunter2"), std::string::npos) << parsed.error();
  }
}

TEST(StoreUrl, RedactsPasswords) {
  const std::pair<std::string, std::string> cases[] = {
      {"postgres://ops:hunter2@db/rolter", "postgres://ops:***@db/rolter"},
      {"postgres://ops:p@ss@db:5432/rolter", "postgres://ops:***@db:5432/rolter"},
      {"postgres://ops@db/rolter", "postgres://ops@db/rolter"},
      {"postgres://db/rolter?user=ops&password=hunter2&sslmode=require",
       "postgres://db/rolter?user=ops&password=***&sslmode=require"},
      {"postgres://a:b@db/x?PASSWORD=c", "postgres://a:***@db/x?PASSWORD=***"},
      {"postgresql:///rolter?host=/run/pg", "postgresql:///rolter?host=/run/pg"},
      {"postgres://db:5432/rolter", "postgres://db:5432/rolter"},
  };
  for (const auto& [url, redacted] : cases) {
    EXPECT_EQ(redact_password(url), redacted);
  }
}

TEST(StoreUrl, HidesPasswordsInMessages) {
  EXPECT_EQ(hide_password("bad token \"hunter2\"", "postgres://ops:hunter2@db"),
            "bad token \"***\"");
  // As written (percent-encoded) and decoded.
  EXPECT_EQ(hide_password("a p@ss b p%40ss", "postgres://ops:p%40ss@db"), "a *** b ***");
  EXPECT_EQ(hide_password("x hunter2", "postgres://db/r?password=hunter2"), "x ***");
  EXPECT_EQ(hide_password("nothing to hide", "postgres://db/r"), "nothing to hide");
}

}  // namespace
}  // namespace rolter

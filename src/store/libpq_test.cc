#include "store/libpq.h"

#include <gtest/gtest.h>

#include <string>

namespace rolter {
namespace {

// The table resolves every function from the installed libpq, and they work without a server.
TEST(LibPqTest, LoadsEveryFunction) {
  std::string error;
  const LibPq* pq = libpq(error);
  ASSERT_NE(pq, nullptr) << error;
  EXPECT_TRUE(error.empty());
  EXPECT_EQ(libpq(error), pq) << "loaded once";
  for (auto* f : {reinterpret_cast<const void*>(pq->connectdb_params),
                  reinterpret_cast<const void*>(pq->status),
                  reinterpret_cast<const void*>(pq->error_message),
                  reinterpret_cast<const void*>(pq->finish),
                  reinterpret_cast<const void*>(pq->reset),
                  reinterpret_cast<const void*>(pq->transaction_status),
                  reinterpret_cast<const void*>(pq->set_notice_processor),
                  reinterpret_cast<const void*>(pq->exec_params),
                  reinterpret_cast<const void*>(pq->result_status),
                  reinterpret_cast<const void*>(pq->result_error_field),
                  reinterpret_cast<const void*>(pq->result_error_message),
                  reinterpret_cast<const void*>(pq->ntuples),
                  reinterpret_cast<const void*>(pq->nfields),
                  reinterpret_cast<const void*>(pq->getvalue),
                  reinterpret_cast<const void*>(pq->getlength),
                  reinterpret_cast<const void*>(pq->cmd_tuples),
                  reinterpret_cast<const void*>(pq->clear)}) {
    EXPECT_NE(f, nullptr);
  }
  // A malformed connection string fails inside libpq, without a server.
  const char* keywords[] = {"dbname", nullptr};
  const char* values[] = {"postgresql://[malformed", nullptr};
  PGconn* conn = pq->connectdb_params(keywords, values, 1);
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(pq->status(conn), CONNECTION_BAD);
  EXPECT_NE(std::string(pq->error_message(conn)), "");
  pq->finish(conn);
}

}  // namespace
}  // namespace rolter

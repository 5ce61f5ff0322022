#include "store/libpq.h"

#include "common/mutex.h"
#include "common/shared_library.h"

namespace rolter {
namespace {

constexpr const char* kSoname = "libpq.so.5";

// Sets `out` to the function `name`; the first one missing is named in `error`.
template <class F>
void resolve(const SharedLibrary& lib, const char* name, F*& out, std::string& error) {
  out = lib.symbol<F>(name);
  if (out == nullptr && error.empty()) error = lib.soname() + " has no " + name;
}

// Fills `pq` from a freshly opened libpq; an empty string when every function was found.
std::string load(LibPq& pq) {
  auto lib = SharedLibrary::open(kSoname);
  if (!lib) return lib.error();
  std::string error;
  resolve(*lib, "PQconnectdbParams", pq.connectdb_params, error);
  resolve(*lib, "PQstatus", pq.status, error);
  resolve(*lib, "PQerrorMessage", pq.error_message, error);
  resolve(*lib, "PQfinish", pq.finish, error);
  resolve(*lib, "PQreset", pq.reset, error);
  resolve(*lib, "PQtransactionStatus", pq.transaction_status, error);
  resolve(*lib, "PQsetNoticeProcessor", pq.set_notice_processor, error);
  resolve(*lib, "PQexecParams", pq.exec_params, error);
  resolve(*lib, "PQresultStatus", pq.result_status, error);
  resolve(*lib, "PQresultErrorField", pq.result_error_field, error);
  resolve(*lib, "PQresultErrorMessage", pq.result_error_message, error);
  resolve(*lib, "PQntuples", pq.ntuples, error);
  resolve(*lib, "PQnfields", pq.nfields, error);
  resolve(*lib, "PQgetvalue", pq.getvalue, error);
  resolve(*lib, "PQgetlength", pq.getlength, error);
  resolve(*lib, "PQcmdTuples", pq.cmd_tuples, error);
  resolve(*lib, "PQclear", pq.clear, error);
  return error;
}

// The table once loaded; written once under the mutex, then only read.
struct Loaded {
  Mutex mutex;
  LibPq table GUARDED_BY(mutex);
  bool done GUARDED_BY(mutex) = false;
};

}  // namespace

const LibPq* libpq(std::string& error) {
  static Loaded loaded;
  MutexLock lock(loaded.mutex);
  if (!loaded.done) {
    LibPq table;
    const std::string why = load(table);
    if (!why.empty()) {
      error = why + " (the PostgreSQL client library: apt-get install libpq5)";
      return nullptr;
    }
    loaded.table = table;
    loaded.done = true;
  }
  return &loaded.table;
}

}  // namespace rolter

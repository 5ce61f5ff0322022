// LibPq: the libpq functions the PostgreSQL store calls, resolved from libpq.so.5 at the first
// PostgreSQL connection (common/shared_library.h). A gateway on SQLite, or with no store at all,
// never maps libpq nor the GnuTLS, Kerberos and LDAP libraries it pulls in.
//
//   std::string error;
//   const LibPq* pq = libpq(error);
//   if (pq == nullptr) return fail(error);  // "postgres: cannot load libpq.so.5: ... (install libpq5)"
//   PGconn* conn = pq->connectdb_params(keywords, values, 1);
//
// Each member is the libpq function of the same name (PQconnectdbParams is connectdb_params).
//
// Thread-safety: libpq() may be called from any thread; the table is loaded once and then only read.
#pragma once

#include <libpq-fe.h>

#include <string>

namespace rolter {

struct LibPq {
  decltype(&::PQconnectdbParams) connectdb_params = nullptr;
  decltype(&::PQstatus) status = nullptr;
  decltype(&::PQerrorMessage) error_message = nullptr;
  decltype(&::PQfinish) finish = nullptr;
  decltype(&::PQreset) reset = nullptr;
  decltype(&::PQtransactionStatus) transaction_status = nullptr;
  decltype(&::PQsetNoticeProcessor) set_notice_processor = nullptr;
  decltype(&::PQexecParams) exec_params = nullptr;
  decltype(&::PQresultStatus) result_status = nullptr;
  decltype(&::PQresultErrorField) result_error_field = nullptr;
  decltype(&::PQresultErrorMessage) result_error_message = nullptr;
  decltype(&::PQntuples) ntuples = nullptr;
  decltype(&::PQnfields) nfields = nullptr;
  decltype(&::PQgetvalue) getvalue = nullptr;
  decltype(&::PQgetlength) getlength = nullptr;
  decltype(&::PQcmdTuples) cmd_tuples = nullptr;
  decltype(&::PQclear) clear = nullptr;
};

// The process's table, every member set; nullptr when libpq.so.5 cannot be loaded or lacks one of
// them, with `error` saying which and how to fix it. A failed load is tried again on the next call
// (the package may have been installed since).
const LibPq* libpq(std::string& error);

}  // namespace rolter

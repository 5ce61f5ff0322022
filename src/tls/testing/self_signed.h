// Test helper: a fresh P-256 key and a self-signed certificate for 127.0.0.1, made with OpenSSL's
// C API and written as PEM files. Header-only; tests only.
//
//   SelfSigned pair = SelfSigned::make();
//   write_pem_files(pair, dir + "/cert.pem", dir + "/key.pem");
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <string>

namespace rolter::tls_testing {

struct SelfSigned {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> cert{nullptr, X509_free};

  static SelfSigned make() {
    SelfSigned out;
    out.key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    out.cert.reset(X509_new());
    X509* cert = out.cert.get();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, out.key.get());
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    if (X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name,
                                                  "IP:127.0.0.1")) {
      X509_add_ext(cert, san, -1);
      X509_EXTENSION_free(san);
    }
    X509_sign(cert, out.key.get(), EVP_sha256());
    return out;
  }
};

inline bool write_text(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  std::fwrite(text.data(), 1, text.size(), f);
  return std::fclose(f) == 0;
}

inline std::string cert_pem(const SelfSigned& s) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, s.cert.get());
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

inline std::string key_pem(const SelfSigned& s) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, s.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

}  // namespace rolter::tls_testing

#include "tls/server_context.h"

#include <gtest/gtest.h>

#include <string>

#include "tls/testing/self_signed.h"

namespace rolter {
namespace {

using tls_testing::SelfSigned;

std::string temp(const std::string& name) { return ::testing::TempDir() + "rolter_tls_" + name; }

TEST(ServerContext, LoadsMatchingCertAndKey) {
  const SelfSigned s = SelfSigned::make();
  ASSERT_TRUE(tls_testing::write_text(temp("ok.pem"), tls_testing::cert_pem(s)));
  ASSERT_TRUE(tls_testing::write_text(temp("ok.key"), tls_testing::key_pem(s)));
  auto context = make_server_context(temp("ok.pem"), temp("ok.key"));
  EXPECT_TRUE(context) << context.error();
}

// Each case: the files given, and what the message must say (the file's name among it).
TEST(ServerContext, ErrorsNameTheFile) {
  const SelfSigned s = SelfSigned::make();
  const SelfSigned other = SelfSigned::make();
  const std::string cert = temp("cert.pem");
  const std::string key = temp("key.pem");
  const std::string other_key = temp("other.key");
  const std::string garbage = temp("garbage.pem");
  const std::string encrypted = temp("encrypted.key");
  ASSERT_TRUE(tls_testing::write_text(cert, tls_testing::cert_pem(s)));
  ASSERT_TRUE(tls_testing::write_text(key, tls_testing::key_pem(s)));
  ASSERT_TRUE(tls_testing::write_text(other_key, tls_testing::key_pem(other)));
  ASSERT_TRUE(tls_testing::write_text(garbage, "not a certificate\n"));
  {
    BIO* bio = BIO_new_file(encrypted.c_str(), "wb");
    ASSERT_NE(bio, nullptr);
    PEM_write_bio_PrivateKey(bio, s.key.get(), EVP_aes_128_cbc(), nullptr, 0, nullptr,
                             const_cast<char*>("secret"));
    BIO_free(bio);
  }
  const std::string missing = temp("missing.pem");
  struct Case {
    std::string cert, key, fragment;
  };
  const Case cases[] = {
      {missing, key, "certificate file \"" + missing + "\": cannot read: No such file"},
      {cert, missing, "private key file \"" + missing + "\": cannot read: No such file"},
      {garbage, key, "certificate file \"" + garbage + "\": not a PEM certificate chain"},
      {cert, garbage, "private key file \"" + garbage + "\": not a usable PEM private key"},
      {cert, other_key,
       "private key file \"" + other_key + "\": does not match the certificate in \"" + cert},
      {cert, encrypted, "private key file \"" + encrypted + "\": not a usable PEM private key"},
  };
  for (const auto& c : cases) {
    auto context = make_server_context(c.cert, c.key);
    ASSERT_FALSE(context) << c.fragment;
    EXPECT_NE(context.error().find(c.fragment), std::string::npos) << context.error();
  }
}

}  // namespace
}  // namespace rolter

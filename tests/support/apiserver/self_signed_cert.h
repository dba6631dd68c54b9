// tests/support/apiserver/self_signed_cert.h: a throwaway TLS identity made at test time.
//
// Test code only. Makes a P-256 key and a self-signed certificate valid for 127.0.0.1 and
// localhost that is its own CA (basicConstraints CA:TRUE), so one PEM serves the loopback server as
// its certificate, the client as the CA to trust, and a test as a client certificate as well.
//
//   auto cert = make_self_signed_cert("loopback-apiserver");
//   ASSERT_TRUE(cert.has_value());
//   // cert->cert_pem, cert->key_pem
#pragma once

#include <expected>
#include <string>

#include "errors/error.h"

namespace hypertopo::testing {

struct CertificatePair {
  std::string cert_pem;
  std::string key_pem;
};

std::expected<CertificatePair, Error> make_self_signed_cert(const std::string& common_name);

}  // namespace hypertopo::testing

// net/tls_config.h: what a TLS client needs to trust a server and to prove who it is.
//
// PEM text, not paths: the kube client reads kubeconfig files (or in-cluster files) into it, and the
// HTTP transport hands it to OpenSSL.
//
//   TransportConfig t{.host = "10.0.0.1", .port = "6443", .tls = true, .tls_config = {.ca_pem = ca}};
#pragma once

#include <string>

namespace hypertopo::net {

struct TlsConfig {
  std::string ca_pem;  // empty: the system's trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_verify = false;  // set only from a kubeconfig that asks for it
  std::string server_name;            // name to verify instead of the URL's host (tls-server-name)
};

}  // namespace hypertopo::net

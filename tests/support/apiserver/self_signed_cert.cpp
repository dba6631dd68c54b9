#include "tests/support/apiserver/self_signed_cert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace hypertopo::testing {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

bool add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

}  // namespace

std::expected<CertificatePair, Error> make_self_signed_cert(const std::string& common_name) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return fail(ErrorCode::kInternal, "could not generate a P-256 key");
  CertPtr cert(X509_new());
  if (!cert) return fail(ErrorCode::kInternal, "could not allocate a certificate");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24L * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!add_extension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !add_extension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign") ||
      !add_extension(cert.get(), NID_ext_key_usage, "serverAuth,clientAuth") ||
      !add_extension(cert.get(), NID_subject_key_identifier, "hash") ||
      !add_extension(cert.get(), NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost")) {
    return fail(ErrorCode::kInternal, "could not add certificate extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return fail(ErrorCode::kInternal, "could not sign the certificate");
  }
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return fail(ErrorCode::kInternal, "could not write the certificate as PEM");
  }
  return CertificatePair{bio_text(cert_bio.get()), bio_text(key_bio.get())};
}

}  // namespace hypertopo::testing

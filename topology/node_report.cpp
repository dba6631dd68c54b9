#include "topology/node_report.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <string_view>

#include "io/bounded_file.h"
#include "io/json_reader.h"
#include "io/yaml_json.h"
#include "io/yaml_reader.h"
#include "text/utf8.h"
#include "topology/hypernode.h"

namespace hypertopo::topology {

using nlohmann::json;

const char* to_string(LinkLayer layer) {
  switch (layer) {
    case LinkLayer::kInfiniBand:
      return "InfiniBand";
    case LinkLayer::kEthernet:
      return "Ethernet";
    case LinkLayer::kUnknown:
      break;
  }
  return "Unknown";
}

std::optional<LinkLayer> parse_link_layer(std::string_view text) {
  if (text == "InfiniBand") return LinkLayer::kInfiniBand;
  if (text == "Ethernet") return LinkLayer::kEthernet;
  if (text == "Unknown") return LinkLayer::kUnknown;
  return std::nullopt;
}

std::string format_rfc3339(std::chrono::sys_seconds t) {
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

namespace {

bool parse_digits(std::string_view text, std::size_t pos, std::size_t count, int& out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    value = value * 10 + (text[i] - '0');
  }
  out = value;
  return true;
}

}  // namespace

std::expected<std::chrono::sys_seconds, Error> parse_rfc3339(std::string_view text) {
  using namespace std::chrono;
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM); fractions are dropped, offsets applied.
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  auto bad = [&] { return fail(ErrorCode::kParse, "'" + std::string(text) + "' is not an RFC 3339 time"); };
  if (!parse_digits(text, 0, 4, y) || text.size() < 20 || text[4] != '-' || !parse_digits(text, 5, 2, mo) ||
      text[7] != '-' || !parse_digits(text, 8, 2, d) || (text[10] != 'T' && text[10] != 't') ||
      !parse_digits(text, 11, 2, h) || text[13] != ':' || !parse_digits(text, 14, 2, mi) || text[16] != ':' ||
      !parse_digits(text, 17, 2, s)) {
    return bad();
  }
  std::size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  }
  int offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (!parse_digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !parse_digits(text, pos + 4, 2, om)) {
      return bad();
    }
    offset_minutes = (text[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != text.size()) return bad();
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return bad();
  return sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} - minutes{offset_minutes};
}

// ---------------------------------------------------------------------------------------------------
// Rendering

namespace {

json render_port(const HcaPort& p) {
  json out = {{"port", p.number},
              {"state", p.state},
              {"physState", p.phys_state},
              {"linkLayer", to_string(p.link_layer)},
              {"rate", p.rate},
              {"lid", p.lid}};
  if (!p.port_guid.empty()) out["portGuid"] = p.port_guid;
  if (!p.netdev.empty()) out["netdev"] = p.netdev;
  return out;
}

json render_hca(const HcaDevice& h) {
  json ports = json::array();
  for (const auto& p : h.ports) ports.push_back(render_port(p));
  return {{"name", h.name},
          {"nodeGuid", h.node_guid},
          {"sysImageGuid", h.sys_image_guid},
          {"nodeDescription", h.node_description},
          {"ports", std::move(ports)}};
}

json render_neighbor(const LldpNeighbor& n) {
  return {{"chassisId", n.chassis_id},          {"chassisIdSubtype", n.chassis_id_subtype},
          {"systemName", n.system_name},        {"portId", n.port_id},
          {"portIdSubtype", n.port_id_subtype}, {"portDescription", n.port_description}};
}

json render_roce(const RoceNetdev& r) {
  json out = {{"netdev", r.netdev}};
  if (!r.rdma_device.empty()) out["rdmaDevice"] = r.rdma_device;
  if (r.rdma_port != 0) out["rdmaPort"] = r.rdma_port;
  if (!r.oper_state.empty()) out["operState"] = r.oper_state;
  if (r.speed_mbps) out["speedMbps"] = *r.speed_mbps;
  if (r.neighbor) out["lldpNeighbor"] = render_neighbor(*r.neighbor);
  return out;
}

json render_gpu(const GpuFabric& g) {
  json out = {{"index", g.index},        {"clusterUuid", g.cluster_uuid},
              {"cliqueId", g.clique_id}, {"state", g.state},
              {"status", g.status},      {"inDomain", g.in_domain}};
  if (g.health_mask) out["healthMask"] = *g.health_mask;
  if (!g.health_summary.empty()) out["healthSummary"] = g.health_summary;
  return out;
}

json render_nvlink(const NvlinkFacts& n) {
  json gpus = json::array();
  for (const auto& g : n.gpus) gpus.push_back(render_gpu(g));
  json out = {{"source", n.source}, {"gpus", std::move(gpus)}, {"conflicts", n.conflicts}};
  if (!n.clique_id.empty()) out["cliqueId"] = n.clique_id;
  return out;
}

}  // namespace

json render_node_report(const NodeReport& report) {
  json hcas = json::array();
  for (const auto& h : report.hcas) hcas.push_back(render_hca(h));
  json roce = json::array();
  for (const auto& r : report.roce) roce.push_back(render_roce(r));
  json spec = {{"nodeName", report.node_name},
               {"probedAt", format_rfc3339(report.probed_at)},
               {"hcas", std::move(hcas)},
               {"roce", std::move(roce)}};
  if (report.nvlink) spec["nvlink"] = render_nvlink(*report.nvlink);
  if (!report.warnings.empty()) spec["warnings"] = report.warnings;
  return json{{"apiVersion", kNodeReportApiVersion},
              {"kind", kNodeReportKind},
              {"metadata", {{"name", report.node_name}}},
              {"spec", std::move(spec)}};
}

std::string render_node_report_yaml(const NodeReport& report) {
  return json_to_yaml(render_node_report(report));
}

// ---------------------------------------------------------------------------------------------------
// Parsing: every accessor knows the path of the value it reads, so errors name the field.

namespace {

class Field {
 public:
  Field(const json& value, std::string path) : value_(value), path_(std::move(path)) {}

  const json& value() const { return value_; }
  const std::string& path() const { return path_; }

  std::unexpected<Error> error(const std::string& what) const {
    return fail(ErrorCode::kParse, path_ + ": " + what);
  }

  std::expected<Field, Error> member(const std::string& key) const {
    if (!value_.is_object()) return error("expected an object");
    auto it = value_.find(key);
    if (it == value_.end()) return fail(ErrorCode::kParse, child_path(key) + ": missing");
    return Field(*it, child_path(key));
  }
  // nullopt when the key is absent (or null); an error when this is not an object.
  std::expected<std::optional<Field>, Error> optional_member(const std::string& key) const {
    if (!value_.is_object()) return error("expected an object");
    auto it = value_.find(key);
    if (it == value_.end() || it->is_null()) return std::optional<Field>{};
    return std::optional<Field>(Field(*it, child_path(key)));
  }
  std::expected<std::vector<Field>, Error> elements() const {
    if (!value_.is_array()) return error("expected a list");
    std::vector<Field> out;
    out.reserve(value_.size());
    for (std::size_t i = 0; i < value_.size(); ++i) {
      out.emplace_back(value_[i], path_ + "[" + std::to_string(i) + "]");
    }
    return out;
  }

  std::expected<std::string, Error> string() const {
    if (!value_.is_string()) return error("expected a string");
    return value_.get<std::string>();
  }
  std::expected<bool, Error> boolean() const {
    if (!value_.is_boolean()) return error("expected true or false");
    return value_.get<bool>();
  }
  std::expected<std::uint64_t, Error> unsigned_integer(std::uint64_t max) const {
    if (value_.is_number_unsigned() || (value_.is_number_integer() && value_.get<std::int64_t>() >= 0)) {
      auto v = value_.get<std::uint64_t>();
      if (v > max) return error("value " + std::to_string(v) + " is larger than " + std::to_string(max));
      return v;
    }
    return error("expected an unsigned integer");
  }

 private:
  std::string child_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  const json& value_;
  std::string path_;
};

// Reads an optional string member into `out`, leaving it empty when absent.
std::expected<void, Error> read_optional_string(const Field& obj, const std::string& key, std::string& out) {
  auto f = obj.optional_member(key);
  if (!f) return std::unexpected(f.error());
  if (!*f) return {};
  auto s = (*f)->string();
  if (!s) return std::unexpected(s.error());
  out = std::move(*s);
  return {};
}

std::expected<void, Error> read_string(const Field& obj, const std::string& key, std::string& out) {
  auto f = obj.member(key);
  if (!f) return std::unexpected(f.error());
  auto s = f->string();
  if (!s) return std::unexpected(s.error());
  out = std::move(*s);
  return {};
}

template <typename T>
std::expected<void, Error> read_unsigned(const Field& obj, const std::string& key, T& out, bool required) {
  auto f = obj.optional_member(key);
  if (!f) return std::unexpected(f.error());
  if (!*f) {
    if (required) return fail(ErrorCode::kParse, obj.path() + "." + key + ": missing");
    return {};
  }
  auto v = (*f)->unsigned_integer(static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
  if (!v) return std::unexpected(v.error());
  out = static_cast<T>(*v);
  return {};
}

std::expected<void, Error> read_string_list(const Field& obj, const std::string& key,
                                            std::vector<std::string>& out) {
  auto f = obj.optional_member(key);
  if (!f) return std::unexpected(f.error());
  if (!*f) return {};
  auto items = (*f)->elements();
  if (!items) return std::unexpected(items.error());
  for (const auto& item : *items) {
    auto s = item.string();
    if (!s) return std::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return {};
}

#define HT_TRY(expr)                                               \
  do {                                                             \
    if (auto _r = (expr); !_r) return std::unexpected(_r.error()); \
  } while (0)

std::expected<HcaPort, Error> parse_port(const Field& f) {
  HcaPort p;
  HT_TRY(read_unsigned(f, "port", p.number, true));
  HT_TRY(read_optional_string(f, "portGuid", p.port_guid));
  HT_TRY(read_optional_string(f, "state", p.state));
  HT_TRY(read_optional_string(f, "physState", p.phys_state));
  std::string layer;
  HT_TRY(read_string(f, "linkLayer", layer));
  auto parsed = parse_link_layer(layer);
  if (!parsed) {
    return fail(ErrorCode::kParse,
                f.path() + ".linkLayer: '" + layer + "' is not InfiniBand, Ethernet or Unknown");
  }
  p.link_layer = *parsed;
  HT_TRY(read_optional_string(f, "rate", p.rate));
  HT_TRY(read_unsigned(f, "lid", p.lid, false));
  HT_TRY(read_optional_string(f, "netdev", p.netdev));
  return p;
}

std::expected<HcaDevice, Error> parse_hca(const Field& f) {
  HcaDevice h;
  HT_TRY(read_string(f, "name", h.name));
  HT_TRY(read_optional_string(f, "nodeGuid", h.node_guid));
  HT_TRY(read_optional_string(f, "sysImageGuid", h.sys_image_guid));
  HT_TRY(read_optional_string(f, "nodeDescription", h.node_description));
  auto ports = f.optional_member("ports");
  if (!ports) return std::unexpected(ports.error());
  if (*ports) {
    auto items = (*ports)->elements();
    if (!items) return std::unexpected(items.error());
    for (const auto& item : *items) {
      auto p = parse_port(item);
      if (!p) return std::unexpected(p.error());
      h.ports.push_back(std::move(*p));
    }
  }
  return h;
}

std::expected<LldpNeighbor, Error> parse_neighbor(const Field& f) {
  if (!f.value().is_object()) return f.error("expected an object");
  LldpNeighbor n;
  HT_TRY(read_optional_string(f, "chassisId", n.chassis_id));
  HT_TRY(read_optional_string(f, "chassisIdSubtype", n.chassis_id_subtype));
  HT_TRY(read_optional_string(f, "systemName", n.system_name));
  HT_TRY(read_optional_string(f, "portId", n.port_id));
  HT_TRY(read_optional_string(f, "portIdSubtype", n.port_id_subtype));
  HT_TRY(read_optional_string(f, "portDescription", n.port_description));
  return n;
}

std::expected<RoceNetdev, Error> parse_roce(const Field& f) {
  RoceNetdev r;
  HT_TRY(read_string(f, "netdev", r.netdev));
  HT_TRY(read_optional_string(f, "rdmaDevice", r.rdma_device));
  HT_TRY(read_unsigned(f, "rdmaPort", r.rdma_port, false));
  HT_TRY(read_optional_string(f, "operState", r.oper_state));
  std::uint64_t speed = 0;
  auto speed_field = f.optional_member("speedMbps");
  if (!speed_field) return std::unexpected(speed_field.error());
  if (*speed_field) {
    HT_TRY(read_unsigned(f, "speedMbps", speed, true));
    r.speed_mbps = speed;
  }
  auto neighbor = f.optional_member("lldpNeighbor");
  if (!neighbor) return std::unexpected(neighbor.error());
  if (*neighbor) {
    auto n = parse_neighbor(**neighbor);
    if (!n) return std::unexpected(n.error());
    r.neighbor = std::move(*n);
  }
  return r;
}

std::expected<GpuFabric, Error> parse_gpu(const Field& f) {
  GpuFabric g;
  HT_TRY(read_unsigned(f, "index", g.index, true));
  HT_TRY(read_optional_string(f, "clusterUuid", g.cluster_uuid));
  HT_TRY(read_unsigned(f, "cliqueId", g.clique_id, false));
  HT_TRY(read_string(f, "state", g.state));
  HT_TRY(read_optional_string(f, "status", g.status));
  auto mask = f.optional_member("healthMask");
  if (!mask) return std::unexpected(mask.error());
  if (*mask) {
    std::uint32_t m = 0;
    HT_TRY(read_unsigned(f, "healthMask", m, true));
    g.health_mask = m;
  }
  HT_TRY(read_optional_string(f, "healthSummary", g.health_summary));
  auto in_domain = f.member("inDomain");
  if (!in_domain) return std::unexpected(in_domain.error());
  auto b = in_domain->boolean();
  if (!b) return std::unexpected(b.error());
  g.in_domain = *b;
  return g;
}

std::expected<NvlinkFacts, Error> parse_nvlink(const Field& f) {
  NvlinkFacts n;
  HT_TRY(read_string(f, "source", n.source));
  HT_TRY(read_optional_string(f, "cliqueId", n.clique_id));
  auto gpus = f.optional_member("gpus");
  if (!gpus) return std::unexpected(gpus.error());
  if (*gpus) {
    auto items = (*gpus)->elements();
    if (!items) return std::unexpected(items.error());
    for (const auto& item : *items) {
      auto g = parse_gpu(item);
      if (!g) return std::unexpected(g.error());
      n.gpus.push_back(std::move(*g));
    }
  }
  HT_TRY(read_string_list(f, "conflicts", n.conflicts));
  return n;
}

// The keys parse_node_report reads, per object; render_node_report writes no others.
using KnownKeys = std::span<const std::string_view>;
constexpr std::string_view kRootKeys[] = {"apiVersion", "kind", "metadata", "spec"};
constexpr std::string_view kSpecKeys[] = {"nodeName", "probedAt", "hcas", "roce", "nvlink", "warnings"};
constexpr std::string_view kHcaKeys[] = {"name", "nodeGuid", "sysImageGuid", "nodeDescription", "ports"};
constexpr std::string_view kPortKeys[] = {"port",      "portGuid", "state", "physState",
                                          "linkLayer", "rate",     "lid",   "netdev"};
constexpr std::string_view kRoceKeys[] = {"netdev",    "rdmaDevice", "rdmaPort",
                                          "operState", "speedMbps",  "lldpNeighbor"};
constexpr std::string_view kNeighborKeys[] = {"chassisId", "chassisIdSubtype", "systemName",
                                              "portId",    "portIdSubtype",    "portDescription"};
constexpr std::string_view kNvlinkKeys[] = {"source", "cliqueId", "gpus", "conflicts"};
constexpr std::string_view kGpuKeys[] = {"index",  "clusterUuid", "cliqueId",      "state",
                                         "status", "healthMask",  "healthSummary", "inDomain"};

class UnknownKeys {
 public:
  explicit UnknownKeys(std::vector<std::string>& out) : out_(out) {}

  // Each key of `obj` (an object, or nothing is checked) that `known` lacks, as `path`.key.
  void check(const json& obj, KnownKeys known, const std::string& path) {
    if (!obj.is_object()) return;
    for (const auto& [key, value] : obj.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      // The key goes into a log line: shortened, and valid UTF-8 whatever bytes it holds.
      const std::string shown = text::valid_utf8(key.size() > 64 ? key.substr(0, 64) + "..." : key);
      const std::string p = path.empty() ? shown : path + "." + shown;
      if (out_.size() < kMaxUnknownKeys && std::find(out_.begin(), out_.end(), p) == out_.end())
        out_.push_back(p);
    }
  }
  // check() for every element of the list obj[key].
  void check_each(const json& obj, const char* key, KnownKeys known, const std::string& path) {
    if (!obj.is_object()) return;
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_array()) return;
    for (const auto& item : *it) check(item, known, path + "." + key + "[]");
  }

 private:
  std::vector<std::string>& out_;
};

// Called on a document that parsed, so every known member has its expected shape.
void collect_unknown_keys(const json& doc, std::vector<std::string>& out) {
  UnknownKeys unknown(out);
  unknown.check(doc, kRootKeys, "");
  auto spec = doc.find("spec");
  if (spec == doc.end() || !spec->is_object()) return;
  unknown.check(*spec, kSpecKeys, "spec");
  unknown.check_each(*spec, "hcas", kHcaKeys, "spec");
  if (auto hcas = spec->find("hcas"); hcas != spec->end() && hcas->is_array()) {
    for (const auto& hca : *hcas) unknown.check_each(hca, "ports", kPortKeys, "spec.hcas[]");
  }
  unknown.check_each(*spec, "roce", kRoceKeys, "spec");
  if (auto roce = spec->find("roce"); roce != spec->end() && roce->is_array()) {
    for (const auto& r : *roce) {
      if (!r.is_object()) continue;
      if (auto n = r.find("lldpNeighbor"); n != r.end())
        unknown.check(*n, kNeighborKeys, "spec.roce[].lldpNeighbor");
    }
  }
  if (auto nvlink = spec->find("nvlink"); nvlink != spec->end()) {
    unknown.check(*nvlink, kNvlinkKeys, "spec.nvlink");
    unknown.check_each(*nvlink, "gpus", kGpuKeys, "spec.nvlink");
  }
}

}  // namespace

std::expected<NodeReport, Error> parse_node_report(const json& doc, std::vector<std::string>* unknown_keys) {
  Field root(doc, "");
  if (!doc.is_object()) return fail(ErrorCode::kParse, "a NodeReport must be an object");
  std::string api_version, kind;
  HT_TRY(read_string(root, "apiVersion", api_version));
  if (api_version != kNodeReportApiVersion) {
    return fail(ErrorCode::kParse, "apiVersion: '" + api_version + "', expected " + kNodeReportApiVersion);
  }
  HT_TRY(read_string(root, "kind", kind));
  if (kind != kNodeReportKind) return fail(ErrorCode::kParse, "kind: '" + kind + "', expected NodeReport");

  auto metadata = root.member("metadata");
  if (!metadata) return std::unexpected(metadata.error());
  std::string metadata_name;
  HT_TRY(read_string(*metadata, "name", metadata_name));

  auto spec = root.member("spec");
  if (!spec) return std::unexpected(spec.error());
  NodeReport report;
  HT_TRY(read_string(*spec, "nodeName", report.node_name));
  if (report.node_name.empty()) return fail(ErrorCode::kParse, "spec.nodeName: empty");
  if (report.node_name != metadata_name) {
    return fail(ErrorCode::kParse, "metadata.name: '" + metadata_name + "' differs from spec.nodeName '" +
                                       report.node_name + "'");
  }
  std::string probed_at;
  HT_TRY(read_string(*spec, "probedAt", probed_at));
  auto t = parse_rfc3339(probed_at);
  if (!t) return std::unexpected(t.error().context("spec.probedAt"));
  report.probed_at = *t;

  auto read_list = [&](const char* key, auto parse_one, auto& out) -> std::expected<void, Error> {
    auto f = spec->optional_member(key);
    if (!f) return std::unexpected(f.error());
    if (!*f) return {};
    auto items = (*f)->elements();
    if (!items) return std::unexpected(items.error());
    for (const auto& item : *items) {
      auto v = parse_one(item);
      if (!v) return std::unexpected(v.error());
      out.push_back(std::move(*v));
    }
    return {};
  };
  HT_TRY(read_list("hcas", parse_hca, report.hcas));
  HT_TRY(read_list("roce", parse_roce, report.roce));
  auto nvlink = spec->optional_member("nvlink");
  if (!nvlink) return std::unexpected(nvlink.error());
  if (*nvlink) {
    auto n = parse_nvlink(**nvlink);
    if (!n) return std::unexpected(n.error());
    report.nvlink = std::move(*n);
  }
  HT_TRY(read_string_list(*spec, "warnings", report.warnings));
  if (unknown_keys) collect_unknown_keys(doc, *unknown_keys);
  return report;
}

#undef HT_TRY

std::expected<NodeReport, Error> parse_node_report_text(std::string_view text,
                                                        std::vector<std::string>* unknown_keys) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  json doc;
  if (first != std::string_view::npos && text[first] == '{') {
    if (io::json_depth(text) > io::kMaxJsonDepth) {
      return fail(ErrorCode::kParse, "nested deeper than " + std::to_string(io::kMaxJsonDepth) + " levels");
    }
    doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded()) return fail(ErrorCode::kParse, "not valid JSON");
  } else {
    auto loaded = io::load_yaml(text, "NodeReport");
    if (!loaded) return std::unexpected(loaded.error());
    try {
      doc = io::yaml_to_json(*loaded);
    } catch (const YAML::Exception& e) {
      return fail(ErrorCode::kParse, std::string("not valid YAML: ") + e.what());
    }
  }
  return parse_node_report(doc, unknown_keys);
}

std::expected<NodeReport, Error> read_node_report_file(const std::filesystem::path& path,
                                                       std::vector<std::string>* unknown_keys) {
  auto text = io::read_bounded_file(path, io::kConfigFileLimit);
  if (!text) return std::unexpected(text.error());
  auto report = parse_node_report_text(*text, unknown_keys);
  if (!report) return std::unexpected(report.error().context(path.string()));
  return report;
}

}  // namespace hypertopo::topology

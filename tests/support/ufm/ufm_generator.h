// tests/support/ufm/ufm_generator.h: UFM REST answers for generated fabrics, as UFM Enterprise writes them.
//
// Test and benchmark code only. Builds the `resources/ports` and `resources/links` records of a
// fat tree whose tiers are known: `pods` groups of `leaves_per_pod` leaves under `spines_per_pod`
// spines, every spine cabled to every core. With `rails` > 1 each host has one HCA per rail, HCA r
// cabled to leaf r of its pod (a rail-optimised scalable unit). Host ports carry a `system_name`
// and a node description that a test can make differ from the Kubernetes node name.
//
//   UfmFabricShape shape{.pods = 4, .leaves_per_pod = 4, .hosts_per_leaf = 16};
//   GeneratedUfm ufm = generate_ufm_fabric(shape);
//   std::string body = json_list(ufm.ports);                  // an unpaged answer
//   std::string page = json_page(ufm.ports, /*page=*/2, /*rpp=*/100);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hypertopo::testing {

struct UfmFabricShape {
  int pods = 2;
  int leaves_per_pod = 2;  // with rails > 1: one leaf per rail, so leaves_per_pod == rails
  int hosts_per_leaf = 4;  // with rails > 1: hosts per pod
  int rails = 1;
  int spines_per_pod = 2;
  int cores = 2;
  // Host i is named "<host_prefix><i>" in system_name and "<description_prefix><i> mlx5_<r>" in the
  // node description.
  std::string host_prefix = "node-";
  std::string description_prefix = "node-";
  bool padding_fields = true;  // the fields a real answer has and we do not read (path, capabilities, ...)
};

struct GeneratedUfm {
  std::vector<std::string> ports;  // one JSON object per record
  std::vector<std::string> links;
  std::vector<std::string> host_port_guids;  // "0x..." per host port, in order
  std::vector<std::string> host_of_port;     // system_name of each host port, same order
  int hosts = 0;
  int switches = 0;
};

GeneratedUfm generate_ufm_fabric(const UfmFabricShape& shape);

// "[r0,r1,...]"
std::string json_list(const std::vector<std::string>& records);
// {"total_resources": N, "page_number": P, "rpp": R, "data": [records of page P (1-based)]}
std::string json_page(const std::vector<std::string>& records, std::size_t page, std::size_t rpp);

}  // namespace hypertopo::testing

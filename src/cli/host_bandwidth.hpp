#pragma once
// What the CPU backend's "% of bandwidth" is measured against: a STREAM-like copy (McCalpin, STREAM
// "Copy" kernel) over arrays four times the total last-level cache, with the OpenMP threads the
// kernels use, counting bytes read + bytes written.
#include <cstddef>
#include <string>

namespace spmv::cli {

struct HostBandwidth {
  double gbs = 0;                  // best of the timed copies, 1 GB = 1e9 bytes
  std::size_t array_bytes = 0;     // size of each of the two arrays
  std::size_t llc_bytes = 0;       // total last-level cache found (all instances)
  int threads = 0;
};

HostBandwidth measure_host_copy_bandwidth();

// "model name" of /proc/cpuinfo plus the OpenMP thread count, e.g. "AMD EPYC 9654 (96 threads)".
std::string host_cpu_description();

}  // namespace spmv::cli

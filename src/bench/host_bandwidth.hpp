#pragma once
// What the CPU backend's "% of bandwidth" is measured against: a STREAM-like copy (McCalpin, STREAM
// "Copy" kernel) over arrays four times the total last-level cache (each at most an eighth of the memory
// available), with the OpenMP threads the kernels use, counting bytes read + bytes written.
#include <cstddef>
#include <string>

namespace spmv::bench {

struct HostBandwidth {
  double gbs = 0;                  // best of the timed copies, 1 GB = 1e9 bytes
  std::size_t array_bytes = 0;     // size of each of the two arrays
  std::size_t llc_bytes = 0;       // total last-level cache found (all instances)
  bool capped = false;             // arrays smaller than 4x the LLC: an eighth of the memory available
  int threads = 0;
};

// threads <= 0: omp_get_max_threads(), as the CPU kernels do by default.
HostBandwidth measure_host_copy_bandwidth(int threads = 0);

// "model name" of /proc/cpuinfo plus the thread count (threads <= 0: the OpenMP default), e.g.
// "AMD EPYC 9654 (96 threads)".
std::string host_cpu_description(int threads = 0);

}  // namespace spmv::bench

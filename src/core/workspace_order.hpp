#pragma once
// Orders the products of one plan whose kernels write a device workspace owned by the plan
// (merge-path carry-outs, PCSR's partial products, LightSpMV's row counter, the COO part's scratch,
// cuSPARSE's buffer). Two products on different streams would otherwise run at once over the same
// scratch and both give wrong answers (issue 19). The rule: after every such product an event is
// recorded on its stream; a product on a different stream than the previous one first makes its
// stream wait for that event. Products of one plan thus form one chain on the device, whatever the
// streams and host threads, while a single stream costs one event record per product and no wait.
//
// Why events and not one workspace per stream: a per-stream workspace must be allocated on first use
// of a stream (apply() would allocate, breaking graph capture) and cannot tell a destroyed stream
// from a new one with a reused handle. Products that need concurrency build one plan per stream.
//
// CUDA-free so that the rule is tested on machines without a GPU (tests/core/workspace_order_test.cpp)
// with a simulated device; src/cuda/dispatch.cu supplies the CUDA driver:
//   struct Driver {
//     using Stream = ...;
//     bool capturing(Stream);                 // the stream is being captured into a graph
//     std::uint64_t id(Stream);               // unique over the process lifetime (cudaStreamGetId)
//     void record(Stream);                    // record the plan's event on the stream
//     void wait(Stream);                      // the stream waits for the event's last record
//   };
#include <cstdint>
#include <mutex>
#include <utility>

namespace spmv::detail {

template <class Driver>
class WorkspaceOrder {
 public:
  using Stream = typename Driver::Stream;

  explicit WorkspaceOrder(Driver driver) : driver_(std::move(driver)) {}

  // Enqueues `product` on `stream` after every earlier product of this plan. Safe from several host
  // threads: the bookkeeping and the enqueueing happen under one lock.
  template <class Product>
  void run(Stream stream, Product&& product) {
    std::lock_guard lock(mutex_);
    // A product captured into a graph runs when the graph is launched, not now: ordering it against
    // other products of the plan is the caller's (plan.hpp says how). Recording the event inside the
    // capture would also make later waits on it illegal outside that capture.
    if (driver_.capturing(stream)) {
      product();
      return;
    }
    const std::uint64_t id = driver_.id(stream);
    if (recorded_ && id != last_stream_) driver_.wait(stream);
    product();
    driver_.record(stream);
    recorded_ = true;
    last_stream_ = id;
  }

  Driver& driver() { return driver_; }

 private:
  Driver driver_;
  std::mutex mutex_;
  bool recorded_ = false;
  std::uint64_t last_stream_ = 0;
};

}  // namespace spmv::detail

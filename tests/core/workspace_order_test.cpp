// The rule that keeps a CUDA plan's workspace safe on several streams (core/workspace_order.hpp),
// checked on a simulated device so that CI, which has no GPU, guards it: every product of a plan must
// happen after the previous one on the device, whatever the streams and host threads. The GPU tests
// (tests/cuda/cuda_streams_test.cpp) check the same with real kernels that overlap.
#include "core/workspace_order.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace {

// A device as CUDA defines it for ordering: each stream runs its operations in order; an event
// remembers the position of its last record; a wait makes everything after it on the waiting stream
// follow everything up to that record on the recording stream.
struct Device {
  struct Position {
    int stream = -1;
    int index = -1;
  };
  std::map<int, int> length;                              // operations per stream so far
  std::vector<std::pair<Position, Position>> edges;       // (record position) -> (wait position)
  Position event;                                         // last record; stream -1: never recorded
  std::vector<Position> products;                         // in enqueue order
  std::set<int> capturing;                                // streams being captured
  int records = 0, waits = 0;

  Position append(int stream) { return {stream, length[stream]++}; }

  // True when `from` happens before `to`: a path of stream order and wait edges.
  bool before(Position from, Position to) const {
    std::vector<Position> todo{from};
    std::set<std::pair<int, int>> seen;
    while (!todo.empty()) {
      const Position p = todo.back();
      todo.pop_back();
      if (p.stream == to.stream && p.index < to.index) return true;
      if (!seen.insert({p.stream, p.index}).second) continue;
      for (const auto& [rec, wait] : edges)
        if (rec.stream == p.stream && rec.index >= p.index) todo.push_back({wait.stream, wait.index});
    }
    return false;
  }
  // Every product after the previous one (so the products form one chain).
  bool chained() const {
    for (std::size_t k = 1; k < products.size(); ++k)
      if (!before(products[k - 1], products[k])) return false;
    return true;
  }
};

struct SimulatedDriver {
  using Stream = int;
  Device* device;
  bool capturing(int stream) { return device->capturing.count(stream) > 0; }
  std::uint64_t id(int stream) { return static_cast<std::uint64_t>(stream) + 1000; }
  void record(int stream) {
    device->event = device->append(stream);
    ++device->records;
  }
  void wait(int stream) {
    const Device::Position at = device->append(stream);
    if (device->event.stream >= 0) device->edges.push_back({device->event, at});
    ++device->waits;
  }
};

using Order = spmv::detail::WorkspaceOrder<SimulatedDriver>;

void product(Device& device, int stream) { device.products.push_back(device.append(stream)); }

TEST(WorkspaceOrder, OneStreamRecordsAndNeverWaits) {
  Device device;
  Order order(SimulatedDriver{&device});
  for (int k = 0; k < 5; ++k) order.run(7, [&] { product(device, 7); });
  EXPECT_EQ(device.records, 5);
  EXPECT_EQ(device.waits, 0);
  EXPECT_TRUE(device.chained());
}

TEST(WorkspaceOrder, ProductsOnManyStreamsFormOneChain) {
  for (int streams : {2, 8}) {
    Device device;
    Order order(SimulatedDriver{&device});
    // Round robin, then a stream repeated, then back: every switch must wait.
    for (int round = 0; round < 4; ++round)
      for (int s = 0; s < streams; ++s) order.run(s, [&] { product(device, s); });
    order.run(0, [&] { product(device, 0); });
    order.run(0, [&] { product(device, 0); });
    order.run(1, [&] { product(device, 1); });
    EXPECT_TRUE(device.chained()) << streams << " streams";
    EXPECT_EQ(device.waits, 4 * streams - 1 + 2) << "one wait per change of stream";
  }
}

TEST(WorkspaceOrder, WithoutTheWaitTheCheckFails) {
  // The checker itself: the same schedule with no wait is not a chain.
  Device device;
  product(device, 0);
  device.event = device.append(0);
  product(device, 1);
  EXPECT_FALSE(device.chained());
}

TEST(WorkspaceOrder, CapturedProductsAreLeftToTheCaller) {
  Device device;
  Order order(SimulatedDriver{&device});
  order.run(1, [&] { product(device, 1); });
  device.capturing.insert(2);
  order.run(2, [] {});  // captured: no record, no wait (the graph's launch is ordered by the caller)
  EXPECT_EQ(device.records, 1);
  EXPECT_EQ(device.waits, 0);
  device.capturing.clear();
  order.run(3, [&] { product(device, 3); });  // still waits for the last product run on stream 1
  EXPECT_EQ(device.waits, 1);
  EXPECT_TRUE(device.chained());
}

TEST(WorkspaceOrder, HostThreadsEnqueueOneAtATime) {
  Device device;
  Order order(SimulatedDriver{&device});
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k)
        order.run(t, [&] {
          const int now = ++inside;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          product(device, t);
          --inside;
        });
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(most.load(), 1) << "two threads enqueued a product at the same time";
  EXPECT_EQ(device.products.size(), 1600u);
  EXPECT_TRUE(device.chained());
}

}  // namespace

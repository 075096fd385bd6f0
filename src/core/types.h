#pragma once
// Units and identifiers shared by every module.
#include <cstdint>
#include <limits>

namespace rltune {

// Simulated time and durations, in whole seconds. Integer time keeps event ordering exact.
using Seconds = std::int64_t;
inline constexpr Seconds kForever = std::numeric_limits<Seconds>::max();

// Index of a job inside the job list of one simulation (a window), 0-based in submit order.
using JobIndex = std::int32_t;
// Global node id: nodes are numbered 0.. across pools in the order the cluster file lists them.
using NodeId = std::int32_t;
// Index of a pool in its ClusterSpec.
using PoolId = std::int32_t;

}  // namespace rltune

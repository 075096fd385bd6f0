#pragma once
// FNV-1a, 64 bits: a stable hash, the same on every platform and run (not cryptographic), for digests
// of inputs and for seeds mixed with names.
#include <cstddef>
#include <cstdint>

namespace rltune {

class Fnv1a {
 public:
  static constexpr std::uint64_t kOffsetBasis = 14695981039346656037ULL;
  explicit Fnv1a(std::uint64_t start = kOffsetBasis) : hash_(start) {}
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) hash_ = (hash_ ^ bytes[i]) * 1099511628211ULL;
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_;
};

}  // namespace rltune

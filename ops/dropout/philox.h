// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC 2011), the counter-based generator of
// cuRAND and PyTorch (aten/src/ATen/core/PhiloxRNGEngine.h): four 32-bit words from a 128-bit
// counter and a 64-bit key, with no state, so any element's draw can be made on its own, by
// any thread, on any device, in any order: the same bits on the CPU and on CUDA.
//   key [2] words (seed lo, hi), counter [4] words -> bits [4] words
// dropout's layout, as PyTorch's (subsequence in words 2-3): words 0-1 the element index / 4,
// words 2-3 the op's counter attribute; element i takes word i % 4.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace mg {

struct PhiloxBlock {
  std::uint32_t word[4];
};

// Random123's philox4x32_R(10, ctr, key): ten rounds, the key bumped by the Weyl constants
// between them (not after the last). The 64-bit product gives both halves of each 32x32
// multiply; nvcc turns it into mul.lo / mul.hi.
MG_HOST_DEVICE constexpr PhiloxBlock philox4x32_10(PhiloxBlock ctr, std::uint32_t key0,
                                                   std::uint32_t key1) {
  constexpr std::uint64_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    const std::uint64_t p0 = kMul0 * ctr.word[0], p1 = kMul1 * ctr.word[2];
    ctr = PhiloxBlock{{static_cast<std::uint32_t>(p1 >> 32) ^ ctr.word[1] ^ key0,
                       static_cast<std::uint32_t>(p1),
                       static_cast<std::uint32_t>(p0 >> 32) ^ ctr.word[3] ^ key1,
                       static_cast<std::uint32_t>(p0)}};
  }
  return ctr;
}

// The four words of dropout's block `block` (elements 4 block .. 4 block + 3).
MG_HOST_DEVICE constexpr PhiloxBlock dropout_philox(std::uint64_t seed, std::uint64_t counter,
                                                    std::uint64_t block) {
  const PhiloxBlock ctr{{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                         static_cast<std::uint32_t>(counter),
                         static_cast<std::uint32_t>(counter >> 32)}};
  return philox4x32_10(ctr, static_cast<std::uint32_t>(seed),
                       static_cast<std::uint32_t>(seed >> 32));
}

namespace detail {
constexpr bool philox_matches(PhiloxBlock ctr, std::uint32_t key0, std::uint32_t key1,
                              PhiloxBlock expected) {
  const PhiloxBlock got = philox4x32_10(ctr, key0, key1);
  for (int i = 0; i < 4; ++i) {
    if (got.word[i] != expected.word[i]) return false;
  }
  return true;
}
}  // namespace detail

// Random123's known-answer vectors for philox4x32 with 10 rounds (its kat_vectors file): a
// wrong constant, round count or word order fails the build, on every compiler that builds it.
static_assert(detail::philox_matches({{0, 0, 0, 0}}, 0, 0,
                                     {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}));
static_assert(detail::philox_matches({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                                     0xffffffffu, 0xffffffffu,
                                     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}));
static_assert(detail::philox_matches({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                                     0xa4093822u, 0x299f31d0u,
                                     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}));

}  // namespace mg

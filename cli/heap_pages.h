// cli/heap_pages.h: a command that builds a large picture at once asks for its heap in huge pages.
//
// `place` reads 6,000 Nodes and 9,510 HyperNodes into some 40 MiB of fresh memory, `discover` a
// 100,000-HCA capture into some 140 MiB, and on a virtual machine each first touch of a 4 KiB page
// is a fault that costs microseconds: a third of place's time in `perf`, half of its wall time on a
// loaded machine. Heap that the kernel may back with 2 MiB transparent huge pages faults once per
// 2 MiB: the heap is grown once by `ahead` bytes of address space, marked MADV_HUGEPAGE and kept,
// and large blocks (files, parser buffers) come from it too. glibc does as much for each heap
// extension under GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (malloc/malloc.c, madvise_thp). Where the
// kernel gives no huge pages (transparent_hugepage=never) this changes nothing; heap never touched
// costs no memory. Call it first thing in the command, once.
//
//   prefer_huge_pages(std::size_t{120} << 20);
#pragma once

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace hypertopo::cli {

inline void prefer_huge_pages(std::size_t ahead) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator has no brk heap to mark, and poisoning these blocks would cost more
  // than they save.
  (void)ahead;
#else
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  constexpr std::size_t kBlock = std::size_t{30} << 20;  // below glibc's largest mmap threshold, 32 MiB
  constexpr std::size_t kMaxBlocks = 64;
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(std::size_t{32} << 20));
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  void* blocks[kMaxBlocks] = {};
  const std::size_t count = std::min(kMaxBlocks, (ahead + kBlock - 1) / kBlock);
  for (std::size_t i = 0; i < count; ++i) {
    blocks[i] = std::malloc(kBlock);
    if (blocks[i] == nullptr) break;
    const auto at = reinterpret_cast<std::uintptr_t>(blocks[i]);
    const std::uintptr_t first = (at + kHuge - 1) / kHuge * kHuge;
    const std::uintptr_t last = (at + kBlock) / kHuge * kHuge;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
  for (void* b : blocks) std::free(b);
#endif
}

}  // namespace hypertopo::cli

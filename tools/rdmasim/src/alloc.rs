//! The program's allocator: jemalloc, asked for transparent huge pages on all its memory.
//!
//! A large fabric's state (`FatTree(k: 32)`: about 190 MB) is read at random, one event touching
//! a handful of cache lines far apart; with 4 KiB pages each of those misses also missed the TLB
//! and walked the page table. Where the kernel gives huge pages only on request (`madvise`, as
//! here), glibc's malloc asks for them only when told by `GLIBC_TUNABLES` before start-up.
//! jemalloc takes its options from the `malloc_conf` string below, baked into the binary. It also
//! places small allocations at multiples of their size class, so a channel's ring of 64-byte
//! slots starts on a cache line. Figures: docs/performance.md, "Huge pages and jemalloc".

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its start-up (`_rjem_` is the crate's symbol prefix): huge pages
/// for the heap (`thp:always` madvises every extent) and for jemalloc's own metadata.
#[cfg(not(target_env = "msvc"))]
#[allow(unsafe_code)]
// SAFETY: jemalloc reads this symbol as a `const char *` to a NUL-terminated string; a reference
// to a byte array is one pointer, to bytes that live for the whole program and end in NUL.
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &[u8; 31] = b"thp:always,metadata_thp:always\0";

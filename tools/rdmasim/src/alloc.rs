//! The program's allocator: jemalloc, with transparent huge pages for all its memory. Large
//! fabrics read hundreds of megabytes at random: jemalloc's size-class placement and fewer TLB
//! misses make them faster (docs/performance.md, "Huge pages and jemalloc"); glibc's
//! malloc asks for huge pages only through an environment variable set before start-up.
//! Heap profilers (massif, DHAT, heaptrack) do not see jemalloc's heap: to use one, build
//! without `mod alloc` in `main.rs`.

#[cfg(target_os = "linux")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its start-up (`_rjem_`: the crate's symbol prefix).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
// SAFETY: jemalloc reads this symbol as a `const char *` to a NUL-terminated string; a reference
// to a byte array is one pointer, to bytes that live for the whole program and end in NUL.
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &[u8; 31] = b"thp:always,metadata_thp:always\0";

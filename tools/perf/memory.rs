//! What this machine's memory costs a simulation whose state outgrows the caches (#16): the
//! latency of one random load by working-set size (where the caches end), and how many random
//! loads the core keeps in flight (ns per load with K independent chains over 256 MiB).
//! Built and run by `tools/perf/memory.sh`; no dependencies, so plain `rustc` builds it.

use std::alloc::{Layout, alloc, dealloc};
use std::hint::black_box;
use std::time::Instant;

const LINE: usize = 64;
const HUGE: usize = 2 << 20;

unsafe extern "C" {
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
}
const MADV_HUGEPAGE: i32 = 14;

/// A buffer of `bytes` on 2 MiB boundaries, asking for huge pages as rdmasim's allocator does.
struct Buf {
    ptr: *mut u8,
    layout: Layout,
}

impl Buf {
    fn new(bytes: usize) -> Buf {
        let layout = Layout::from_size_align(bytes, HUGE).expect("a valid layout");
        // Not zeroed: zeroing would touch every page before the advice, in small pages. Every
        // line is written (`link_randomly`) before any is read.
        // SAFETY: `layout` has a non-zero size; the memory is freed once, in `drop`.
        let ptr = unsafe { alloc(layout) };
        assert!(!ptr.is_null(), "out of memory");
        // SAFETY: the range is this allocation's; the advice is only a hint.
        unsafe { madvise(ptr, bytes, MADV_HUGEPAGE) };
        Buf { ptr, layout }
    }

    /// Links every line into one cycle in a random order: each line holds the next one's address.
    fn link_randomly(&self, seed: u64) -> *const usize {
        let n = self.layout.size() / LINE;
        let mut order: Vec<usize> = (0..n).collect();
        let mut x = seed;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let at = |i: usize| self.ptr.wrapping_add(order[i] * LINE) as *mut usize;
        for i in 0..n {
            // SAFETY: both lines lie inside the buffer, and a line holds a `usize`.
            unsafe { *at(i) = at((i + 1) % n) as usize };
        }
        at(0)
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

/// ns per load of `chains` pointer chases run side by side, `loads` loads each, starting at
/// lines spread along the cycle from `start`.
fn chase(start: *const usize, lines: usize, chains: usize, loads: usize) -> f64 {
    let mut p: Vec<*const usize> = Vec::with_capacity(chains);
    let mut q = start;
    for c in 0..chains {
        p.push(q);
        let step = if c + 1 < chains { lines / chains } else { 0 };
        for _ in 0..step {
            // SAFETY: every line of the cycle holds the address of another of its lines.
            q = unsafe { *q } as *const usize;
        }
    }
    let t = Instant::now();
    for _ in 0..loads {
        for x in p.iter_mut() {
            // SAFETY: as above.
            *x = unsafe { **x } as *const usize;
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / (loads * chains) as f64;
    black_box(&p);
    ns
}

fn main() {
    println!("one random load at a time, by working set:");
    for kib in [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 262144] {
        let buf = Buf::new(kib << 10);
        let start = buf.link_randomly(0x9E37_79B9_7F4A_7C15);
        let lines = (kib << 10) / LINE;
        chase(start, lines, 1, lines.min(1 << 20)); // a first pass, to warm what fits
        println!(
            "  {:>7} KiB: {:6.1} ns per load",
            kib,
            chase(start, lines, 1, 4_000_000)
        );
    }
    println!("random loads in flight over 256 MiB (K independent chains):");
    let buf = Buf::new(256 << 20);
    let start = buf.link_randomly(0x2545_F491_4F6C_DD1D);
    let lines = (256 << 20) / LINE;
    chase(start, lines, 1, lines); // a first pass over every line
    for k in [1, 2, 4, 8, 12, 16, 24, 32] {
        println!(
            "  K = {:>2}: {:6.1} ns per load",
            k,
            chase(start, lines, k, 16_000_000 / k)
        );
    }
    // Whether the advice took: the kernel may give small pages anyway.
    if let Ok(maps) = std::fs::read_to_string("/proc/self/smaps_rollup")
        && let Some(huge) = maps.lines().find(|l| l.starts_with("AnonHugePages"))
    {
        println!("{huge} (the buffer's, in huge pages)");
    }
}

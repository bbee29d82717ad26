//! A hint to start loading a value's cache lines: on large fabrics each event's state is a miss,
//! and the loop warms the state of events a few steps ahead while it handles the current one.

/// Starts loading the cache line holding `value`.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_at((value as *const T).cast());
}

/// Starts loading the line holding `value` to be written (a line about to be stored into: its
/// owner need not be asked again at the store).
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch_write<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the address.
    // `prefetchw` by hand: `_MM_HINT_ET0` lowers to a plain read prefetch unless the build
    // targets the `prfchw` feature. CPUs without it (Intel before Broadwell) run it as a no-op.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) (value as *const T), options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Starts loading every cache line of `value` (a model's row whose fields an event reads all
/// over it, such as a NIC).
#[inline]
pub fn prefetch_lines<T>(value: &T) {
    prefetch_head(value, std::mem::size_of::<T>());
}

/// Starts loading the cache lines of `value`'s first `bytes` bytes (a row's head, the fields
/// every event reads, without the parts only some events read).
#[inline]
pub fn prefetch_head<T>(value: &T, bytes: usize) {
    let start = (value as *const T).cast::<u8>();
    let lines = (start as usize % 64 + bytes.min(std::mem::size_of::<T>())).div_ceil(64);
    for i in 0..lines {
        prefetch_at(start.wrapping_add(i * 64));
    }
}

/// Starts loading the line at `at`; does nothing on targets without the hint.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_at(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

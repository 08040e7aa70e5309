//! heapprof as a Rust global allocator. Every block gets heapprof's header naming its
//! allocation stack, counted and snapshotted by the same C core as `heapprof.so`
//! (every `HEAPPROF_*` variable applies), and `heapprof-analyze` reads the program's
//! cores and snapshots:
//!
//! ```ignore
//! #[global_allocator]
//! static A: heapprof::Heapprof = heapprof::Heapprof;
//! ```
//!
//! Below the tags the blocks come from the libc's malloc family, called as
//! [`std::alloc::System`] calls it: `Heapprof` is `System` with a header in front.
//! Works in dynamically linked programs and in `-C target-feature=+crt-static` ones.

use std::alloc::{GlobalAlloc, Layout};

extern "C" {
    fn heapprof_rust_malloc(size: usize) -> *mut u8;
    fn heapprof_rust_calloc(n: usize, size: usize) -> *mut u8;
    fn heapprof_rust_realloc(p: *mut u8, size: usize) -> *mut u8;
    fn heapprof_rust_aligned_alloc(align: usize, size: usize) -> *mut u8;
    fn heapprof_rust_free(p: *mut u8);
}

/// The alignment malloc guarantees, as `System` takes it (x86_64, aarch64: 16).
const MIN_ALIGN: usize = if cfg!(any(target_arch = "x86", target_arch = "arm")) { 8 } else { 16 };

/// The global allocator: `System`'s calls, through heapprof's tagging core.
pub struct Heapprof;

/// Whether malloc's own alignment suffices, by `System`'s rule.
#[inline]
fn plain(layout: &Layout, size: usize) -> bool {
    layout.align() <= MIN_ALIGN && layout.align() <= size
}

unsafe impl GlobalAlloc for Heapprof {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(&layout, layout.size()) {
            heapprof_rust_malloc(layout.size())
        } else {
            let align = layout.align().max(std::mem::size_of::<usize>());
            heapprof_rust_aligned_alloc(align, layout.size())
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(&layout, layout.size()) {
            heapprof_rust_calloc(layout.size(), 1)
        } else {
            let p = self.alloc(layout);
            if !p.is_null() {
                std::ptr::write_bytes(p, 0, layout.size());
            }
            p
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        heapprof_rust_free(ptr)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(&layout, new_size) {
            return heapprof_rust_realloc(ptr, new_size);
        }
        let new = Layout::from_size_align_unchecked(new_size, layout.align());
        let p = self.alloc(new);
        if !p.is_null() {
            std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        p
    }
}

//! The heap a natively running program would hold on SBF.
//!
//! On SBF a program allocates from a bump allocator in its own heap region, which never frees:
//! the bytes allocated during an invocation are the heap it uses, and an allocation past the
//! region's end fails the program ("memory allocation failed, out of memory"). Natively the
//! program allocates from the process's allocator, so this module's global allocator counts,
//! on the thread running a native program's own code, each allocation as SBF's bump allocator
//! would place it. It still allocates from the system allocator, past the limit too: the
//! program cannot be stopped inside an allocation (the global allocator may not unwind), so it
//! is stopped at its next syscall or when it returns (see `native`).
//!
//! Each invocation (a top-level instruction, or a CPI into a native program) gets a frame of its
//! own, as each SBF invocation gets a fresh heap region.

use std::{
    alloc::{GlobalAlloc, Layout, System},
    cell::Cell,
};

/// Bytes at the start of the SBF heap region where the default bump allocator keeps its position.
const BUMP_POSITION_BYTES: u64 = 8;

/// Which heap a native program's SBF build would allocate from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapLayout {
    /// solana-program-entrypoint's default bump allocator (what Anchor's `entrypoint!` installs):
    /// `HEAP_LENGTH` (32 KiB) whatever heap frame the transaction requested.
    EntrypointDefault,
    /// A custom allocator spanning the whole heap frame the transaction requested
    /// (`RequestHeapFrame`, 32 KiB by default).
    RequestedFrame,
}

impl HeapLayout {
    /// Bytes an invocation may allocate in a heap frame of `frame_bytes`.
    pub fn capacity_bytes(self, frame_bytes: u32) -> u64 {
        let region_bytes = match self {
            HeapLayout::EntrypointDefault => solana_program_entrypoint::HEAP_LENGTH as u64,
            HeapLayout::RequestedFrame => u64::from(frame_bytes),
        };
        region_bytes.saturating_sub(BUMP_POSITION_BYTES)
    }
}

/// The heap of the running invocation, while its program's own code runs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Frame {
    /// Whether allocations on this thread are the program's (false while the runtime works).
    metered: bool,
    used_bytes: u64,
    capacity_bytes: u64,
}

impl Frame {
    pub(crate) fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    pub(crate) fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    pub(crate) fn is_exhausted(&self) -> bool {
        self.used_bytes > self.capacity_bytes
    }
}

thread_local! {
    static FRAME: Cell<Frame> = const {
        Cell::new(Frame { metered: false, used_bytes: 0, capacity_bytes: 0 })
    };
}

/// The running invocation's frame.
pub(crate) fn frame() -> Frame {
    FRAME.get()
}

/// Starts an invocation's empty frame, not yet metered; returns the frame it replaces, which
/// `restore` puts back when the invocation ends.
pub(crate) fn start_frame(capacity_bytes: u64) -> Frame {
    FRAME.replace(Frame {
        metered: false,
        used_bytes: 0,
        capacity_bytes,
    })
}

pub(crate) fn restore(frame: Frame) {
    FRAME.set(frame);
}

/// Whether the code running on this thread is a native program's own.
pub(crate) fn is_metered() -> bool {
    FRAME.get().metered
}

/// Counts allocations as the program's (`true`) or the runtime's (`false`) until dropped.
pub(crate) struct Metering {
    previous: bool,
}

impl Metering {
    pub(crate) fn set(metered: bool) -> Self {
        let mut frame = FRAME.get();
        let previous = frame.metered;
        frame.metered = metered;
        FRAME.set(frame);
        Metering { previous }
    }
}

impl Drop for Metering {
    fn drop(&mut self) {
        let mut frame = FRAME.get();
        frame.metered = self.previous;
        FRAME.set(frame);
    }
}

/// Places `size` bytes aligned to `align` as a bump allocator growing down from an aligned top
/// would: the bytes below the top in use afterwards.
fn bump(used_bytes: u64, size: usize, align: usize) -> u64 {
    let align = align as u64;
    let end = used_bytes.saturating_add(size as u64);
    end.div_ceil(align).saturating_mul(align)
}

fn count(size: usize, align: usize) {
    // `try_with`: an allocation may come while the thread's locals are being torn down.
    let _ = FRAME.try_with(|cell| {
        let mut frame = cell.get();
        if frame.metered {
            frame.used_bytes = bump(frame.used_bytes, size, align);
            cell.set(frame);
        }
    });
}

/// The process's allocator, counting what native programs allocate (see the module's docs).
pub struct CountingAllocator;

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size(), layout.align());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size(), layout.align());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    /// A bump allocator reallocates by allocating the new size and copying: the old block
    /// stays held.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size, layout.align());
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_rounds_each_allocation_to_its_alignment() {
        assert_eq!(bump(0, 1, 1), 1);
        assert_eq!(bump(1, 8, 8), 16);
        assert_eq!(bump(16, 3, 4), 20);
        assert_eq!(bump(20, 0, 16), 32);
    }

    #[test]
    fn only_metered_allocations_count() {
        let outer = start_frame(1_024);
        drop(vec![0u8; 100]);
        assert_eq!(frame().used_bytes(), 0);
        {
            let _program = Metering::set(true);
            let kept = std::hint::black_box(vec![0u8; 100]);
            drop(kept);
            {
                let _runtime = Metering::set(false);
                drop(std::hint::black_box(vec![0u8; 4_096]));
            }
            let mut grown: Vec<u8> = Vec::with_capacity(8);
            grown.extend_from_slice(&[0; 9]);
            drop(std::hint::black_box(grown));
        }
        // 100, then 8, then the 16 the vector grew to as a new block.
        assert_eq!(frame().used_bytes(), 124);
        assert!(!frame().is_exhausted());
        restore(outer);
    }

    #[test]
    fn capacity_leaves_the_bump_position_word() {
        assert_eq!(HeapLayout::EntrypointDefault.capacity_bytes(256 * 1024), 32 * 1024 - 8);
        assert_eq!(HeapLayout::RequestedFrame.capacity_bytes(64 * 1024), 64 * 1024 - 8);
    }
}

//! The transposition table: a shared, lock-free cache of search results.
//!
//! Each entry is two `u64` words: the position key XOR-ed with the data, and
//! the data. A torn write by another thread (Lazy SMP) then fails the key
//! check instead of returning another position's move, as in Crafty and
//! Stockfish's early lockless tables.
//!
//! ```
//! use niwatori::tt::{Bound, TranspositionTable};
//! let tt = TranspositionTable::new(1);
//! tt.store(0xdead_beef, 0x1234, 57, 6, Bound::Exact);
//! let hit = tt.probe(0xdead_beef).unwrap();
//! assert_eq!((hit.mv, hit.score, hit.depth, hit.bound), (0x1234, 57, 6, Bound::Exact));
//! assert!(tt.probe(0xfeed_face).is_none());
//! ```

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true value is at most the score (no move reached alpha).
    Upper = 1,
    /// The true value is at least the score (a move reached beta).
    Lower = 2,
    /// The score is the true value at that depth.
    Exact = 3,
}

/// A probe result.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The best move as rsshogi's 16-bit `Move` (0 when none).
    pub mv: u16,
    pub score: i32,
    pub depth: i32,
    pub bound: Bound,
}

struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

/// The table's memory: zeroed slots, 2 MiB aligned and (on Linux) marked
/// for transparent huge pages. With 4 KiB pages nearly every probe of a
/// 64 MiB table also missed the TLB, and the page walk stalled the
/// prefetch that was meant to hide the miss (6 % of the game search).
struct Slots {
    ptr: std::ptr::NonNull<Slot>,
    len: usize,
}

const HUGE_PAGE: usize = 2 << 20;

impl Slots {
    fn layout(len: usize) -> Option<std::alloc::Layout> {
        let bytes = len.checked_mul(std::mem::size_of::<Slot>())?;
        std::alloc::Layout::from_size_align(bytes, HUGE_PAGE.min(bytes.next_power_of_two())).ok()
    }

    /// `None` when the memory cannot be had.
    fn zeroed(len: usize) -> Option<Self> {
        let layout = Self::layout(len)?;
        // SAFETY: the layout's size is non-zero (len ≥ 1024); all-zero bytes
        // are valid `AtomicU64`s, and they are written before any use.
        unsafe {
            let raw = std::alloc::alloc(layout);
            if raw.is_null() {
                return None;
            }
            // Advice before the first touch, so that the pages are faulted
            // in huge; a kernel without THP ignores it.
            #[cfg(target_os = "linux")]
            libc::madvise(raw.cast(), layout.size(), libc::MADV_HUGEPAGE);
            raw.write_bytes(0, layout.size());
            Some(Self {
                ptr: std::ptr::NonNull::new_unchecked(raw.cast()),
                len,
            })
        }
    }
}

impl std::ops::Deref for Slots {
    type Target = [Slot];
    fn deref(&self) -> &[Slot] {
        // SAFETY: `ptr` holds `len` initialised slots until dropped.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        let layout = Self::layout(self.len).expect("the layout it was allocated with");
        // SAFETY: allocated in `zeroed` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) }
    }
}

// SAFETY: the slots are atomics, shared by reference like a `Vec<Slot>`.
unsafe impl Send for Slots {}
unsafe impl Sync for Slots {}

/// A fixed-size table indexed by the low bits of the position key.
pub struct TranspositionTable {
    slots: Slots,
    mask: usize,
    generation: AtomicU8,
}

// data layout: mv 16 | score 16 | depth 8 | bound 2 | generation 6
fn pack(mv: u16, score: i32, depth: i32, bound: Bound, generation: u8) -> u64 {
    u64::from(mv)
        | (u64::from(score as i16 as u16) << 16)
        | (u64::from(depth.clamp(-1, 254) as i16 as u8) << 32)
        | ((bound as u64) << 40)
        | (u64::from(generation & 63) << 42)
}

impl TranspositionTable {
    /// A table of about `megabytes` MiB (rounded down to a power of two
    /// entries, at least 1024). Aborts if the memory cannot be had; see
    /// [`TranspositionTable::try_new`].
    pub fn new(megabytes: usize) -> Self {
        Self::try_new(megabytes)
            .unwrap_or_else(|| panic!("cannot allocate a {megabytes} MiB transposition table"))
    }

    /// As [`TranspositionTable::new`], or `None` when the memory cannot be
    /// had (a GUI's `USI_Hash` beyond the machine's memory).
    pub fn try_new(megabytes: usize) -> Option<Self> {
        let wanted = megabytes.max(1).checked_mul(1 << 20)? / std::mem::size_of::<Slot>();
        let len = (wanted.next_power_of_two() >> 1).max(1024);
        Some(Self {
            slots: Slots::zeroed(len)?,
            mask: len - 1,
            generation: AtomicU8::new(0),
        })
    }

    /// Forgets everything (`usinewgame`).
    pub fn clear(&self) {
        for slot in self.slots.iter() {
            slot.check.store(0, Ordering::Relaxed);
            slot.data.store(0, Ordering::Relaxed);
        }
        self.generation.store(0, Ordering::Relaxed);
    }

    /// Marks the start of a new search, so that old entries are replaced first.
    pub fn new_search(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    fn slot(&self, key: u64) -> &Slot {
        &self.slots[(key as usize) & self.mask]
    }

    /// Starts loading `key`'s slot into the cache: called before a move is
    /// made, the child's probe then rarely waits on memory (it was a fifth
    /// of the game search's time).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let slot: *const Slot = self.slot(key);
            // SAFETY: SSE is part of x86_64's baseline, and a prefetch is
            // a hint that never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(slot.cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    pub fn probe(&self, key: u64) -> Option<Entry> {
        let slot = self.slot(key);
        let data = slot.data.load(Ordering::Relaxed);
        let check = slot.check.load(Ordering::Relaxed);
        if data == 0 || check ^ data != key {
            return None;
        }
        let bound = match (data >> 40) & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => return None,
        };
        Some(Entry {
            mv: data as u16,
            score: i32::from((data >> 16) as u16 as i16),
            depth: i32::from((data >> 32) as u8 as i8),
            bound,
        })
    }

    /// Stores a result, replacing the slot's entry unless it is a deeper
    /// result for another position from this search.
    pub fn store(&self, key: u64, mv: u16, score: i32, depth: i32, bound: Bound) {
        let slot = self.slot(key);
        let generation = self.generation.load(Ordering::Relaxed);
        let old = slot.data.load(Ordering::Relaxed);
        let old_key = slot.check.load(Ordering::Relaxed) ^ old;
        if old != 0 && old_key != key {
            let old_depth = i32::from((old >> 32) as u8 as i8);
            let old_generation = ((old >> 42) & 63) as u8;
            if old_generation == generation & 63 && old_depth > depth + 2 {
                return;
            }
        }
        // Keep the old move when the new result has none (fail-low).
        let mv = if mv == 0 && old_key == key {
            old as u16
        } else {
            mv
        };
        let data = pack(mv, score, depth, bound, generation);
        slot.check.store(key ^ data, Ordering::Relaxed);
        slot.data.store(data, Ordering::Relaxed);
    }

    /// Per-mille of the first 1000 slots used by the current search (USI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let generation = self.generation.load(Ordering::Relaxed) & 63;
        self.slots
            .iter()
            .take(1000)
            .filter(|s| {
                let d = s.data.load(Ordering::Relaxed);
                d != 0 && ((d >> 42) & 63) as u8 == generation
            })
            .count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_beyond_any_memory_is_none_not_an_abort() {
        assert!(TranspositionTable::try_new(1 << 40).is_none());
        assert!(TranspositionTable::try_new(usize::MAX).is_none());
        assert!(TranspositionTable::try_new(1).is_some());
    }
}

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
    /// The position was searched for a mate in one and has none.
    pub no_mate_in_one: bool,
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

/// Entries a position may occupy: one 64-byte cache line.
const CLUSTER: usize = 4;

/// A fixed-size table of clusters indexed by the low bits of the position key.
pub struct TranspositionTable {
    slots: Slots,
    mask: usize,
    generation: AtomicU8,
}

// data layout: mv 16 | score 16 | depth 8 | bound 2 | generation 6 | no mate in one 1
fn pack(mv: u16, score: i32, depth: i32, bound: Bound, generation: u8, no_mate: bool) -> u64 {
    u64::from(mv)
        | (u64::from(score as i16 as u16) << 16)
        | (u64::from(depth.clamp(-1, 254) as i16 as u8) << 32)
        | ((bound as u64) << 40)
        | (u64::from(generation & 63) << 42)
        | (u64::from(no_mate) << NO_MATE_BIT)
}

/// The data bit of [`Entry::no_mate_in_one`].
const NO_MATE_BIT: u32 = 48;

impl TranspositionTable {
    /// A table of about `megabytes` MiB (rounded down to a power of two
    /// clusters, at least 256). Aborts if the memory cannot be had; see
    /// [`TranspositionTable::try_new`].
    pub fn new(megabytes: usize) -> Self {
        Self::try_new(megabytes)
            .unwrap_or_else(|| panic!("cannot allocate a {megabytes} MiB transposition table"))
    }

    /// As [`TranspositionTable::new`], or `None` when the memory cannot be
    /// had (a GUI's `USI_Hash` beyond the machine's memory).
    pub fn try_new(megabytes: usize) -> Option<Self> {
        let wanted =
            megabytes.max(1).checked_mul(1 << 20)? / std::mem::size_of::<[Slot; CLUSTER]>();
        let clusters = (1usize << (usize::BITS - 1 - wanted.max(1).leading_zeros())).max(256);
        Some(Self {
            slots: Slots::zeroed(clusters * CLUSTER)?,
            mask: clusters - 1,
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

    fn cluster(&self, key: u64) -> &[Slot] {
        let first = ((key as usize) & self.mask) * CLUSTER;
        &self.slots[first..first + CLUSTER]
    }

    /// Starts loading `key`'s cluster (one cache line) into the cache:
    /// called before a move is made, the child's probe then rarely waits on
    /// memory (it was a fifth of the game search's time).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let cluster: *const Slot = self.cluster(key).as_ptr();
            // SAFETY: SSE is part of x86_64's baseline, and a prefetch is
            // a hint that never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(cluster.cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    pub fn probe(&self, key: u64) -> Option<Entry> {
        let data = self.cluster(key).iter().find_map(|slot| {
            let data = slot.data.load(Ordering::Relaxed);
            let check = slot.check.load(Ordering::Relaxed);
            (data != 0 && check ^ data == key).then_some(data)
        })?;
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
            no_mate_in_one: data >> NO_MATE_BIT & 1 == 1,
        })
    }

    /// Stores a result: over the position's own entry if the cluster has
    /// one, else over an empty slot, else over the entry worth least (its
    /// depth less 8 for each search since it was written), as Stockfish's
    /// table replaces.
    pub fn store(&self, key: u64, mv: u16, score: i32, depth: i32, bound: Bound) {
        self.store_probed(key, mv, score, depth, bound, false);
    }

    /// [`Self::store`], `no_mate` when the search found the position has no
    /// mate in one (an entry of the same position that said so keeps it).
    pub fn store_probed(
        &self,
        key: u64,
        mv: u16,
        score: i32,
        depth: i32,
        bound: Bound,
        no_mate: bool,
    ) {
        let cluster = self.cluster(key);
        let generation = self.generation.load(Ordering::Relaxed) & 63;
        let mut victim = 0;
        let mut victim_worth = i32::MAX;
        let mut old_move = 0;
        let mut no_mate = no_mate;
        for (i, slot) in cluster.iter().enumerate() {
            let old = slot.data.load(Ordering::Relaxed);
            if old == 0 {
                if victim_worth > i32::MIN {
                    (victim, victim_worth) = (i, i32::MIN);
                }
                continue;
            }
            if slot.check.load(Ordering::Relaxed) ^ old == key {
                (victim, old_move) = (i, old as u16);
                no_mate |= old >> NO_MATE_BIT & 1 == 1;
                break;
            }
            let old_depth = i32::from((old >> 32) as u8 as i8);
            let age = i32::from(generation.wrapping_sub(((old >> 42) & 63) as u8) & 63);
            let worth = old_depth - 8 * age;
            if worth < victim_worth {
                (victim, victim_worth) = (i, worth);
            }
        }
        // Keep the old move when the new result has none (fail-low).
        let mv = if mv == 0 { old_move } else { mv };
        let data = pack(mv, score, depth, bound, generation, no_mate);
        cluster[victim].check.store(key ^ data, Ordering::Relaxed);
        cluster[victim].data.store(data, Ordering::Relaxed);
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

    #[test]
    fn the_whole_size_is_used_in_clusters_of_a_cache_line() {
        assert_eq!(std::mem::size_of::<[Slot; CLUSTER]>(), 64);
        let tt = TranspositionTable::new(64);
        assert_eq!(tt.slots.len() * std::mem::size_of::<Slot>(), 64 << 20);
        let tt = TranspositionTable::new(3);
        assert_eq!(tt.slots.len() * std::mem::size_of::<Slot>(), 2 << 20);
    }

    #[test]
    fn a_full_cluster_gives_up_its_least_worth_entry() {
        let tt = TranspositionTable::new(1);
        let clusters = (tt.mask + 1) as u64;
        // five positions of one cluster, at depths 5, 1, 7, 3, then 4
        let keys: Vec<u64> = (1..=5).map(|i| 17 + i * clusters).collect();
        for (&key, depth) in keys.iter().zip([5, 1, 7, 3]) {
            tt.store(key, 0x100 + depth as u16, 10 * depth, depth, Bound::Lower);
        }
        assert!(keys[..4].iter().all(|&k| tt.probe(k).is_some()));
        tt.store(keys[4], 0x104, 40, 4, Bound::Exact);
        let kept: Vec<Option<i32>> = keys.iter().map(|&k| tt.probe(k).map(|e| e.depth)).collect();
        assert_eq!(kept, [Some(5), None, Some(7), Some(3), Some(4)]);

        // the same position again: its own entry, keeping its move on a fail-low
        tt.store(keys[2], 0, -30, 8, Bound::Upper);
        let e = tt.probe(keys[2]).unwrap();
        assert_eq!(
            (e.mv, e.score, e.depth, e.bound),
            (0x107, -30, 8, Bound::Upper)
        );

        // an older search's entries go first (the shallowest of them here,
        // at depth 4) even before a shallower current one (depth 3)
        tt.new_search();
        tt.store(keys[3], 0x113, 0, 3, Bound::Lower);
        tt.store(keys[1], 0x111, 0, 1, Bound::Lower);
        let kept: Vec<Option<i32>> = keys.iter().map(|&k| tt.probe(k).map(|e| e.depth)).collect();
        assert_eq!(kept, [Some(5), Some(1), Some(8), Some(3), None]);

        // a position found to have no mate in one stays so marked when
        // its entry is written again without the probe
        assert!(!tt.probe(keys[0]).unwrap().no_mate_in_one);
        tt.store_probed(keys[0], 0x120, -5, 0, Bound::Upper, true);
        tt.store(keys[0], 0x121, 7, 0, Bound::Lower);
        let e = tt.probe(keys[0]).unwrap();
        assert_eq!((e.mv, e.score, e.no_mate_in_one), (0x121, 7, true));
        assert!(!tt.probe(keys[1]).unwrap().no_mate_in_one);
    }
}

//! Shadow memory for the race detector: for each 4-byte word of a tracked
//! allocation, the accesses that a later access may still race with.
//!
//! Each [`Entry`] is one access (thread, instruction, kind, epoch) with a mask of
//! the bytes of the word it touched, so byte-sized accesses by different threads
//! to one word do not collide. A word keeps two entries inline and spills to a
//! list beyond that (many threads reading one value, say).
//!
//! An access X checks every entry E that touches one of its bytes: a race if E
//! is another thread's, the two conflict (one writes, and not both are atomic)
//! and E does not happen before X. Then X *subsumes* the entries that happen
//! before it and that X stands in for: any later access that would race with E
//! would race with X too. That holds when X writes if E writes, and E is atomic
//! if X is (a read cannot stand in for a write, nor an atomic for a plain
//! access). Subsumed bytes leave E's mask; X joins the word.

use super::clock::{Clock, Epoch, epoch};
use super::report::AccessKind;

/// Words per shadow page: pages are made on first touch, so a large buffer of
/// which a launch touches a little costs little.
const PAGE_WORDS: usize = 1024;

/// The thread id of an empty slot.
const NONE: u32 = u32::MAX;

/// One access, as the shadow of one word records it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The thread (its index in the grid, block-major).
    pub tid: u32,
    /// The instruction (see `race::Sites`).
    pub site: u32,
    /// The thread's phase and release counter at the access.
    pub phase: u32,
    pub n: u32,
    /// Words from the access's first word to this one (saturating).
    pub back: u16,
    /// Bits 0-3: the bytes of this word touched; bits 4-5: the access's first
    /// byte within its first word.
    pub mask: u8,
    pub kind: AccessKind,
}

impl Entry {
    const EMPTY: Entry = Entry {
        tid: NONE,
        site: 0,
        phase: 0,
        n: 0,
        back: 0,
        mask: 0,
        kind: AccessKind::Read,
    };

    fn is_empty(&self) -> bool {
        self.tid == NONE
    }

    fn bytes(&self) -> u8 {
        self.mask & 0xf
    }

    /// The epoch of the access.
    pub fn epoch(&self) -> Epoch {
        epoch(self.phase, self.n)
    }

    /// The byte offset of the access's first byte, given this word's index.
    pub fn start(&self, word: u64) -> u64 {
        (word.saturating_sub(u64::from(self.back)) << 2) + u64::from(self.mask >> 4)
    }
}

/// Whether accesses of kinds `a` and `b` by different threads may race.
fn conflicts(a: AccessKind, b: AccessKind) -> bool {
    (a.is_write() || b.is_write()) && !(a.is_atomic() && b.is_atomic())
}

/// Whether an access of kind `x` that `e` happens before stands in for `e`.
fn subsumes(x: AccessKind, e: AccessKind) -> bool {
    (x.is_write() || !e.is_write()) && (e.is_atomic() || !x.is_atomic())
}

/// The kinds of entries, each kept in its own set once a word spills: plain
/// reads, plain writes, atomic reads, atomic writes (RMWs included).
const CLASSES: usize = 4;

fn class(k: AccessKind) -> usize {
    usize::from(k.is_write()) + 2 * usize::from(k.is_atomic())
}

/// The kind an entry of class `c` stands for in the conflict rules.
fn class_kind(c: usize) -> AccessKind {
    [
        AccessKind::Read,
        AccessKind::Write,
        AccessKind::AtomicRead,
        AccessKind::AtomicWrite,
    ][c]
}

/// Who is asking: the accessing thread and what it knows.
pub(crate) struct View<'a> {
    pub tid: u32,
    pub block: u32,
    pub phase: u32,
    pub per_block: u32,
    pub know: &'a Clock,
}

impl View<'_> {
    /// Whether `e` happens before the access (its own thread's entries do).
    pub fn hb(&self, e: &Entry) -> bool {
        if e.tid == self.tid {
            return true;
        }
        let b = e.tid / self.per_block;
        (b == self.block && e.phase < self.phase) || self.know.knows(e.tid, b, e.epoch())
    }
}

#[derive(Copy, Clone)]
struct Cell {
    inline: [Entry; 2],
    /// 0, or 1 + the index of the [`Spill`] holding all of this word's entries.
    spill: u32,
}

const EMPTY_CELL: Cell = Cell {
    inline: [Entry::EMPTY; 2],
    spill: 0,
};

/// Entries of one class, sorted by thread, with a summary that lets a whole
/// set be skipped: many threads reading one value, or adding to one counter,
/// make large sets, and scanning them at every access would cost the square.
#[derive(Default)]
struct Set {
    entries: Vec<Entry>,
    /// The block of every entry, or `None` if they are of several blocks.
    block: Option<u32>,
    /// The highest phase of any entry (an upper bound).
    max_phase: u32,
}

impl Set {
    /// Whether every entry happens before an access by `v`, by the barriers of
    /// its block alone.
    fn all_before(&self, v: &View<'_>) -> bool {
        self.entries.is_empty() || (self.block == Some(v.block) && self.max_phase < v.phase)
    }

    fn first_of(&self, tid: u32) -> usize {
        self.entries.partition_point(|e| e.tid < tid)
    }

    /// Takes `bytes` out of the masks of the entries in `range`, dropping those
    /// left with none.
    fn take_bytes(&mut self, bytes: u8, range: std::ops::Range<usize>) {
        let mut i = range.start;
        let mut end = range.end;
        while i < end {
            let e = &mut self.entries[i];
            e.mask &= !bytes;
            if e.bytes() == 0 {
                self.entries.remove(i);
                end -= 1;
            } else {
                i += 1;
            }
        }
        if self.entries.is_empty() {
            *self = Set::default();
        }
    }

    fn insert(&mut self, x: Entry, block: u32) {
        let at = self.entries.partition_point(|e| e.tid <= x.tid);
        self.block = match (self.entries.is_empty(), self.block) {
            (true, _) => Some(block),
            (false, Some(b)) if b == block => Some(b),
            _ => None,
        };
        self.max_phase = if self.entries.is_empty() {
            x.phase
        } else {
            self.max_phase.max(x.phase)
        };
        self.entries.insert(at, x);
    }
}

#[derive(Default)]
struct Spill {
    sets: [Set; CLASSES],
}

impl Spill {
    fn len(&self) -> usize {
        self.sets.iter().map(|s| s.entries.len()).sum()
    }
}

/// The shadow of one allocation.
#[derive(Default)]
pub(crate) struct Shadow {
    pages: Vec<Option<Box<[Cell]>>>,
    spills: Vec<Spill>,
    free: Vec<u32>,
}

/// A race found by [`Shadow::access`]: the earlier entry and the byte.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Conflict {
    pub earlier: Entry,
    /// Its word, for [`Entry::start`].
    pub word: u64,
    /// The lowest byte offset both accesses touch.
    pub byte: u64,
}

fn conflict(e: &Entry, x: &Entry, word: u64) -> Conflict {
    let common = e.bytes() & x.bytes();
    Conflict {
        earlier: *e,
        word,
        byte: (word << 2) + u64::from(common.trailing_zeros()),
    }
}

/// Whether `e` races with `x`, which `v` makes.
fn races(e: &Entry, x: &Entry, v: &View<'_>) -> bool {
    e.bytes() & x.bytes() != 0 && e.tid != x.tid && conflicts(e.kind, x.kind) && !v.hb(e)
}

impl Shadow {
    fn cell(&mut self, word: u64) -> &mut Cell {
        let (page, at) = ((word as usize) / PAGE_WORDS, (word as usize) % PAGE_WORDS);
        if self.pages.len() <= page {
            self.pages.resize_with(page + 1, || None);
        }
        let p = self.pages[page].get_or_insert_with(|| vec![EMPTY_CELL; PAGE_WORDS].into());
        &mut p[at]
    }

    /// Records an access of `size` bytes at byte `off` by `x` (its mask and
    /// `back` are filled in here), after checking it against the entries it
    /// may race with. On a race, yields the conflict.
    pub fn access(
        &mut self,
        off: u64,
        size: u64,
        mut x: Entry,
        v: &View<'_>,
    ) -> Result<(), Conflict> {
        let end = off + size.max(1);
        let first = off >> 2;
        let start_bits = ((off & 3) as u8) << 4;
        for word in first..=(end - 1) >> 2 {
            let lo = (word << 2).max(off) - (word << 2);
            let hi = ((word << 2) + 4).min(end) - (word << 2);
            let bytes = ((1u16 << hi) - (1u16 << lo)) as u8;
            x.mask = bytes | start_bits;
            x.back = u16::try_from(word - first).unwrap_or(u16::MAX);
            let cell = *self.cell(word);
            if cell.spill == 0 {
                self.inline(word, cell, x, v)?;
            } else {
                self.spilled(word, cell.spill as usize - 1, x, v)?;
            }
        }
        Ok(())
    }

    /// A word of at most two entries: check them all, drop what `x` subsumes,
    /// add `x`, spill if three remain.
    fn inline(&mut self, word: u64, cell: Cell, x: Entry, v: &View<'_>) -> Result<(), Conflict> {
        for e in &cell.inline {
            if !e.is_empty() && races(e, &x, v) {
                return Err(conflict(e, &x, word));
            }
        }
        let mut kept = [Entry::EMPTY; 3];
        let mut len = 0;
        for mut e in cell.inline {
            if e.is_empty() {
                continue;
            }
            if e.bytes() & x.bytes() != 0 && subsumes(x.kind, e.kind) && v.hb(&e) {
                e.mask &= !x.bytes();
            }
            if e.bytes() != 0 {
                kept[len] = e;
                len += 1;
            }
        }
        kept[len] = x;
        len += 1;
        if len <= 2 {
            self.cell(word).inline = [kept[0], kept[1]];
            return Ok(());
        }
        let mut spill = Spill::default();
        for e in kept {
            spill.sets[class(e.kind)].insert(e, e.tid / v.per_block);
        }
        let index = match self.free.pop() {
            Some(i) => {
                self.spills[i as usize] = spill;
                i
            }
            None => {
                self.spills.push(spill);
                self.spills.len() as u32 - 1
            }
        };
        let c = self.cell(word);
        c.inline = [Entry::EMPTY; 2];
        c.spill = index + 1;
        Ok(())
    }

    /// A spilled word. Only the sets of classes that conflict with `x` are
    /// checked, each skipped whole when the block's barriers order it. A set
    /// that `x` subsumes is emptied of `x`'s bytes when all of it happens
    /// before `x`; otherwise only `x`'s own thread's entries are.
    fn spilled(&mut self, word: u64, index: usize, x: Entry, v: &View<'_>) -> Result<(), Conflict> {
        let spill = &mut self.spills[index];
        let mut all_before = [false; CLASSES];
        for (c, set) in spill.sets.iter().enumerate() {
            all_before[c] = set.all_before(v);
            if all_before[c] || !conflicts(class_kind(c), x.kind) {
                continue;
            }
            if let Some(e) = set.entries.iter().find(|e| races(e, &x, v)) {
                return Err(conflict(e, &x, word));
            }
            // Every conflicting entry happens before `x` (or is its own).
            all_before[c] = true;
        }
        for (c, set) in spill.sets.iter_mut().enumerate() {
            if !subsumes(x.kind, class_kind(c)) {
                continue;
            }
            if all_before[c] {
                let n = set.entries.len();
                set.take_bytes(x.bytes(), 0..n);
            } else {
                let from = set.first_of(x.tid);
                let to = set.first_of(x.tid + 1);
                set.take_bytes(x.bytes(), from..to);
            }
        }
        spill.sets[class(x.kind)].insert(x, v.block);
        if spill.len() <= 2 {
            let mut inline = [Entry::EMPTY; 2];
            let all = spill.sets.iter().flat_map(|s| s.entries.iter());
            for (slot, e) in inline.iter_mut().zip(all) {
                *slot = *e;
            }
            *spill = Spill::default();
            self.free.push(index as u32);
            let c = self.cell(word);
            c.inline = inline;
            c.spill = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tid: u32, kind: AccessKind) -> Entry {
        Entry {
            tid,
            kind,
            ..Entry::EMPTY
        }
    }

    /// Thread `tid` alone in its block, knowing nothing: nothing else happens
    /// before its accesses.
    fn alone(tid: u32, know: &Clock) -> View<'_> {
        View {
            tid,
            block: tid,
            phase: 0,
            per_block: 1,
            know,
        }
    }

    /// Thread `tid` of one big block, past a barrier: every phase-0 access
    /// happens before its accesses.
    fn after_barrier(tid: u32, know: &Clock) -> View<'_> {
        View {
            tid,
            block: 0,
            phase: 1,
            per_block: 1 << 20,
            know,
        }
    }

    #[test]
    fn byte_masks_keep_neighbours_apart_and_sets_scale() {
        let k = Clock::default();
        let mut s = Shadow::default();
        // Four threads write the four bytes of one word: no race.
        for t in 0..4 {
            s.access(t as u64, 1, entry(t, AccessKind::Write), &alone(t, &k))
                .expect("disjoint bytes");
        }
        // A fifth thread's 2-byte read of bytes 2..4 races with thread 2.
        let c = s
            .access(2, 2, entry(9, AccessKind::Read), &alone(9, &k))
            .expect_err("race");
        assert_eq!((c.earlier.tid, c.byte), (2, 2));
        assert_eq!(c.earlier.start(c.word), 2);
        // Many unordered readers of one word: a set, no race, one entry each
        // even when a reader comes back.
        for t in (10..2000).chain(10..20) {
            s.access(4, 4, entry(t, AccessKind::Read), &alone(t, &k))
                .expect("reads");
        }
        let index = s.cell(1).spill as usize - 1;
        assert_eq!(s.spills[index].len(), 1990);
        // An unordered write races with the first reader.
        let c = s
            .access(4, 4, entry(5000, AccessKind::Write), &alone(5000, &k))
            .expect_err("write after unordered reads");
        assert_eq!(c.earlier.tid, 10);
        // After a barrier the write subsumes them all.
        s.access(
            4,
            4,
            entry(5000, AccessKind::Write),
            &after_barrier(5000, &k),
        )
        .expect("ordered");
        assert_eq!(s.cell(1).spill, 0);
        let c = s
            .access(4, 4, entry(31, AccessKind::AtomicRead), &alone(31, &k))
            .expect_err("plain write vs atomic read");
        assert_eq!(c.earlier.tid, 5000);
        // Atomics never race with each other, however many.
        for t in 0..3000 {
            s.access(8, 4, entry(t, AccessKind::AtomicRmw), &alone(t, &k))
                .expect("atomic");
        }
        // A plain read after them races with the first.
        let c = s
            .access(8, 4, entry(7000, AccessKind::Read), &alone(7000, &k))
            .expect_err("plain read vs atomic writes");
        assert_eq!((c.earlier.tid, c.earlier.kind), (0, AccessKind::AtomicRmw));
    }
}

//! The lookahead front: the next pending events in key order, moved out of the calendar and the
//! far heap ahead of time so that the loop knows which events come next and can warm their state
//! (`Handler::prefetch`). Every entry in the front comes before every other pending one.
//!
//! A fixed ring, not an `engine::ring::Ring`: the loop reads it five times per event, and a
//! constant mask costs fewer instructions there than a length loaded each time (docs/performance.md).

use super::heap::Entry;

/// Room for the longest front a queue may ask for (`EventQueue::set_lookahead`).
pub(super) const CAP: usize = 32;

#[derive(Debug)]
pub(super) struct Front {
    e: Box<[Entry; CAP]>,
    head: usize,
    len: usize,
}

impl Default for Front {
    fn default() -> Self {
        let empty = Entry {
            key: 0,
            kind: 0,
            target: 0,
            data: 0,
        };
        Front {
            e: Box::new([empty; CAP]),
            head: 0,
            len: 0,
        }
    }
}

impl Front {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The `i`-th entry, the first next.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Entry> {
        (i < self.len).then(|| &self.e[(self.head + i) % CAP])
    }

    #[inline]
    pub fn back(&self) -> Option<&Entry> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Entry> {
        let e = *self.get(0)?;
        self.head = (self.head + 1) % CAP;
        self.len -= 1;
        Some(e)
    }

    /// Appends `e`, which comes after every entry here.
    #[inline]
    pub fn push_back(&mut self, e: Entry) {
        debug_assert!(self.len < CAP && self.back().is_none_or(|b| b.key < e.key));
        self.e[(self.head + self.len) % CAP] = e;
        self.len += 1;
    }

    pub fn pop_back(&mut self) -> Option<Entry> {
        let e = *self.back()?;
        self.len -= 1;
        Some(e)
    }

    /// Puts `e` in its place by key; the front must have room.
    pub fn insert(&mut self, e: Entry) {
        debug_assert!(self.len < CAP);
        let mut i = self.len;
        while i > 0 && self.e[(self.head + i - 1) % CAP].key > e.key {
            self.e[(self.head + i) % CAP] = self.e[(self.head + i - 1) % CAP];
            i -= 1;
        }
        self.e[(self.head + i) % CAP] = e;
        self.len += 1;
    }
}

/// The front's entries in place (`EventQueue::front_view`): the loop's warming reads an
/// entry's kind before it builds an event, and only for a call that warms.
pub(crate) struct View<'a> {
    e: &'a [Entry; CAP],
    head: usize,
    len: usize,
}

impl View<'_> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The `i`-th entry, the first next; `i` below `len`.
    #[inline]
    pub fn entry(&self, i: usize) -> &Entry {
        debug_assert!(i < self.len);
        &self.e[(self.head + i) % CAP]
    }
}

impl Front {
    #[inline]
    pub fn view(&self) -> View<'_> {
        View {
            e: &self.e,
            head: self.head,
            len: self.len,
        }
    }
}

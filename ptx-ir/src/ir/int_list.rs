//! Compact storage for initializer lists of plain decimal integers
//! (`{0, 12, 255, ...}`): the bulk of data-heavy modules (embedded tables,
//! NVIDIA Warp's byte arrays, CUDA's `__device__` constant tables).
//!
//! Invariant (kept by [`IntListBuilder`], the only way to make one): a list
//! is [`IntList::Bytes`] exactly when every value is at most 255, and it is
//! never empty. Together with [`super::Initializer::list`], which turns
//! every list of plain decimal literals into an `IntList`, this keeps one
//! representation per written list, so IR equality after a round trip holds.

use super::{IntLit, Radix};

/// Decimal integer literals without a `U` suffix, one element each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntList {
    /// Every value fits in a byte.
    Bytes(Box<[u8]>),
    Words(Box<[u64]>),
}

impl IntList {
    pub fn len(&self) -> usize {
        match self {
            IntList::Bytes(b) => b.len(),
            IntList::Words(w) => w.len(),
        }
    }

    /// Always false (lists are never empty); for symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> u64 {
        match self {
            IntList::Bytes(b) => b[i] as u64,
            IntList::Words(w) => w[i],
        }
    }

    pub fn values(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The literal element `i` stands for (as the general parser makes it).
    pub fn lit(&self, i: usize) -> IntLit {
        lit_of(self.get(i))
    }
}

/// The literal a plain decimal `value` is (unsigned when too big for `.s64`).
pub fn lit_of(value: u64) -> IntLit {
    IntLit { value, radix: Radix::Dec, unsigned: value > i64::MAX as u64, suffix: false }
}

/// Is `l` a literal an [`IntList`] can hold (decimal, no suffix)?
pub fn is_plain(l: &IntLit) -> bool {
    *l == lit_of(l.value)
}

/// Collects values, in bytes while they fit.
#[derive(Default)]
pub struct IntListBuilder {
    bytes: Vec<u8>,
    words: Option<Vec<u64>>,
}

impl IntListBuilder {
    pub fn new() -> IntListBuilder {
        IntListBuilder::default()
    }

    #[inline]
    pub fn push(&mut self, v: u64) {
        match &mut self.words {
            Some(w) => w.push(v),
            None if v <= 255 => self.bytes.push(v as u8),
            None => self.widen(v),
        }
    }

    /// The first value that does not fit a byte: the list becomes words.
    #[cold]
    fn widen(&mut self, v: u64) {
        let mut w: Vec<u64> = Vec::with_capacity(self.bytes.len() * 2 + 1);
        w.extend(self.bytes.iter().map(|&b| b as u64));
        w.push(v);
        self.bytes = Vec::new();
        self.words = Some(w);
    }

    /// The list, or `None` when nothing was pushed.
    pub fn finish(self) -> Option<IntList> {
        match self.words {
            Some(w) => Some(IntList::Words(w.into_boxed_slice())),
            None if self.bytes.is_empty() => None,
            None => Some(IntList::Bytes(self.bytes.into_boxed_slice())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_until_a_value_does_not_fit() {
        let mut b = IntListBuilder::new();
        b.push(1);
        b.push(255);
        assert_eq!(b.finish(), Some(IntList::Bytes(vec![1, 255].into())));
        let mut b = IntListBuilder::new();
        b.push(1);
        b.push(256);
        b.push(u64::MAX);
        let l = b.finish().unwrap();
        assert_eq!(l, IntList::Words(vec![1, 256, u64::MAX].into()));
        assert_eq!(l.lit(2), IntLit { value: u64::MAX, radix: Radix::Dec, unsigned: true, suffix: false });
        assert!(IntListBuilder::new().finish().is_none());
    }

    #[test]
    fn plain_literals() {
        assert!(is_plain(&IntLit::dec(7)));
        assert!(!is_plain(&IntLit { value: 7, radix: Radix::Hex, unsigned: false, suffix: false }));
        assert!(!is_plain(&IntLit { value: 7, radix: Radix::Dec, unsigned: true, suffix: true }));
        // `-1` folded to a two's complement value is not a plain literal.
        assert!(!is_plain(&IntLit::dec(-1)));
    }
}

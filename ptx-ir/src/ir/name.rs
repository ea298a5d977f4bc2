//! [`Name`]: a name as written in the source, held in place when it is
//! short.
//!
//! Most names of a module are registers (`%r153`, `%rd12`, `%p3`): a body
//! of old-style PTX declares each on a line of its own, and machine-made
//! PTX names thousands of range members. A name of at most
//! [`Name::INLINE_MAX`] bytes is kept in the value itself, so making,
//! cloning and dropping it allocates nothing; a longer one is boxed. A
//! `Name` is as large as a `Box<str>` (16 bytes).
//!
//! **Invariant:** a name is held in place exactly when it has at most
//! [`Name::INLINE_MAX`] bytes, whichever way it is made, so one text has
//! one representation. Equality, order and hashing are those of the text,
//! so a `Name` is found in a map by a `&str` ([`std::borrow::Borrow`]), and
//! it prints (`Display`, `Debug`) as its text does.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// A name as written in the source (`foo`, `%r1`, `$L__BB0_1`).
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    /// The bytes, zero past the length (at most [`Name::INLINE_MAX`]).
    Inline([u8; Name::INLINE_MAX], InlineLen),
    Boxed(Box<str>),
}

/// The length of a name held in place: a byte of eight values (an enum,
/// so that the layout is known to fit beside the box's pointer).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum InlineLen {
    L0,
    L1,
    L2,
    L3,
    L4,
    L5,
    L6,
    L7,
}

impl InlineLen {
    const ALL: [InlineLen; Name::INLINE_MAX + 1] = [InlineLen::L0, InlineLen::L1, InlineLen::L2, InlineLen::L3, InlineLen::L4, InlineLen::L5, InlineLen::L6, InlineLen::L7];
}

impl Name {
    /// The longest name held in place, in bytes.
    pub const INLINE_MAX: usize = 7;

    /// The name `text`.
    #[inline]
    pub fn new(text: &str) -> Name {
        let b = text.as_bytes();
        let n = b.len();
        if n > Name::INLINE_MAX {
            return Name(Repr::Boxed(text.into()));
        }
        let word = packed(b);
        let w = word.to_le_bytes();
        Name(Repr::Inline([w[0], w[1], w[2], w[3], w[4], w[5], w[6]], InlineLen::ALL[n]))
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline(bytes, len) => {
                let b = &bytes[..*len as usize];
                // SAFETY: the bytes are those of a whole `&str` (`Name::new`
                // copies all of one, of at most `INLINE_MAX` bytes), so they
                // are valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(b) }
            }
            Repr::Boxed(s) => s,
        }
    }

    /// A name held in place as its bytes, zero past its length, and the
    /// length (so that it is copied whole, a copy of fixed size: the
    /// printer); `None` for a boxed one.
    #[inline]
    pub fn inline_bytes(&self) -> Option<(&[u8; Name::INLINE_MAX], usize)> {
        match &self.0 {
            Repr::Inline(bytes, len) => Some((bytes, *len as usize)),
            Repr::Boxed(_) => None,
        }
    }

    /// Whether the name is held in place (for the tests of the invariant).
    #[cfg(test)]
    fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline(..))
    }
}

/// The bytes of a text of at most 8 bytes as one little-endian number,
/// zero past the text's end; read in at most two loads that overlap when
/// the text is shorter than they are (or-ing a byte they share with itself
/// keeps it), not byte by byte. Names and the parser's keys of short names
/// (`parse::scope`) are made with it.
#[inline(always)]
pub(crate) fn packed(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let lo = u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let hi = u64::from(u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]));
        lo | hi << (8 * (n - 4))
    } else if n >= 2 {
        let lo = u64::from(u16::from_le_bytes([b[0], b[1]]));
        let hi = u64::from(u16::from_le_bytes([b[n - 2], b[n - 1]]));
        lo | hi << (8 * (n - 2))
    } else {
        b.first().map_or(0, |&c| u64::from(c))
    }
}

impl Default for Name {
    fn default() -> Name {
        Name::new("")
    }
}

impl Deref for Name {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Name {
    #[inline]
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Name {}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == other.as_str()
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for Name {
    /// The text's hash, so that a map keyed by names is searched by `&str`.
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<&str> for Name {
    #[inline]
    fn from(text: &str) -> Name {
        Name::new(text)
    }
}

impl From<&String> for Name {
    fn from(text: &String) -> Name {
        Name::new(text)
    }
}

impl From<String> for Name {
    /// A long text's allocation becomes the name's.
    fn from(text: String) -> Name {
        match text.len() <= Name::INLINE_MAX {
            true => Name::new(&text),
            false => Name(Repr::Boxed(text.into_boxed_str())),
        }
    }
}

impl From<Box<str>> for Name {
    fn from(text: Box<str>) -> Name {
        match text.len() <= Name::INLINE_MAX {
            true => Name::new(&text),
            false => Name(Repr::Boxed(text)),
        }
    }
}

impl From<&Name> for Name {
    fn from(name: &Name) -> Name {
        name.clone()
    }
}

impl From<Name> for String {
    fn from(name: Name) -> String {
        match name.0 {
            Repr::Boxed(s) => s.into(),
            Repr::Inline(..) => name.as_str().to_string(),
        }
    }
}

impl From<Name> for Box<str> {
    fn from(name: Name) -> Box<str> {
        match name.0 {
            Repr::Boxed(s) => s,
            Repr::Inline(..) => name.as_str().into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Every length around the inline limit keeps its text, and a name is
    /// held in place exactly when it is short enough, however it is made.
    #[test]
    fn names_keep_their_text_in_place_or_boxed() {
        assert_eq!(std::mem::size_of::<Name>(), std::mem::size_of::<Box<str>>());
        for text in ["", "a", "%r1", "%r12", "%rd12", "%rd123", "%rd1234", "%rd12345", "$L__BB0_1", "é", "%é12", "%ré1234", "_ZN6Kokkos4Impl"] {
            for name in [Name::new(text), Name::from(text.to_string()), Name::from(Box::<str>::from(text)), Name::from(text).clone()] {
                assert_eq!(name.as_str(), text);
                assert_eq!(&*name, text);
                assert_eq!(name.is_inline(), text.len() <= Name::INLINE_MAX, "{text}");
                assert_eq!(format!("{name}|{name:?}"), format!("{text}|{text:?}"));
                assert_eq!(String::from(name.clone()), text);
                assert_eq!(&*Box::<str>::from(name), text);
            }
        }
    }

    /// Equality, order and hashing are the text's: a map keyed by names is
    /// searched by `&str`, and names sort as their texts do.
    #[test]
    fn names_compare_and_hash_as_their_text() {
        let texts = ["%r10", "%r2", "", "%rd12345678", "%rd1234567", "b", "a"];
        let mut names: Vec<Name> = texts.iter().map(|t| Name::new(t)).collect();
        let map: HashMap<Name, usize> = names.iter().cloned().zip(0..).collect();
        for (k, t) in texts.iter().enumerate() {
            assert_eq!(map.get(*t), Some(&k));
            assert!(names[k] == *t && *t == names[k]);
        }
        names.sort();
        let mut sorted = texts.to_vec();
        sorted.sort();
        assert_eq!(names.iter().map(|n| n.as_str()).collect::<Vec<_>>(), sorted);
        assert_ne!(Name::new("%r1"), Name::new("%r1\0"));
    }
}

//! [`Writer`]: text put by position into a buffer on the stack and appended
//! to the output a buffer at a time.
//!
//! Instruction lines are many short pieces (a register name, `, `, a
//! modifier): appended to a `String` one at a time, each piece cost a test
//! of capacity, a call of `memcpy` and a length stored in memory, about 25
//! host instructions for a few bytes. Here a piece of at most
//! [`Piece::MAX`] bytes is copied whole, a copy of fixed size the compiler
//! makes inline, and only its length is counted; a longer one is copied
//! by slice. The buffer goes to the output when the next piece might not
//! fit, and at the end ([`Writer::finish`]).
//!
//! Only whole texts (`&str`, the bytes of a [`Name`] or a [`Piece`] made
//! from a `&str`, ASCII digits) are put, and the bytes past a piece's
//! length are written over before they are counted, so the buffer is
//! always valid UTF-8 up to its length.

use ptx_ir::ir::Name;

/// Bytes the buffer holds before it is appended to the output.
const BUF: usize = 2048;

/// Texts at most this long are put by a copy of fixed size.
const SHORT: usize = 32;

pub(crate) struct Writer<'o> {
    out: &'o mut String,
    buf: [u8; BUF],
    len: usize,
}

/// A short text (a modifier, an opcode) as a fixed-size array, zero past
/// its length, so it is copied without a call; or a mark that the text is
/// too long for one.
#[derive(Clone, Copy)]
pub(crate) struct Piece {
    bytes: [u8; Piece::MAX],
    /// The text's length, or [`Piece::LONG`].
    len: u8,
}

impl Piece {
    /// The longest text a piece holds.
    pub(crate) const MAX: usize = 15;

    /// The length of a piece whose text is too long for it.
    const LONG: u8 = u8::MAX;

    /// `text` as a piece, or the mark of a text longer than [`Piece::MAX`].
    pub(crate) fn new(text: &str) -> Piece {
        let b = text.as_bytes();
        let mut bytes = [0; Piece::MAX];
        if b.len() > Piece::MAX {
            return Piece { bytes, len: Piece::LONG };
        }
        bytes[..b.len()].copy_from_slice(b);
        Piece { bytes, len: b.len() as u8 }
    }
}

impl<'o> Writer<'o> {
    /// The most tabs [`Writer::tabs`] puts.
    pub(crate) const MAX_TABS: usize = 8;

    /// A writer appending to `out`.
    #[inline]
    pub(crate) fn new(out: &'o mut String) -> Writer<'o> {
        Writer { out, buf: [0; BUF], len: 0 }
    }

    /// Appends what is in the buffer to the output.
    #[inline(never)]
    fn flush(&mut self) {
        let bytes = &self.buf[..self.len];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: the buffer holds whole texts only, up to its length (the
        // module's comment: every put copies all of a `&str`, of a name or
        // piece made from one, or ASCII, and the room for it is made before
        // it is copied, so no text is cut when the buffer is emptied), so
        // its bytes are valid UTF-8. Checking them was 0.55 M host
        // instructions of the 15 M that printing matrix_free takes.
        self.out.push_str(unsafe { std::str::from_utf8_unchecked(bytes) });
        self.len = 0;
    }

    /// Makes room for `n` more bytes (`n` at most [`BUF`]).
    #[inline(always)]
    fn room(&mut self, n: usize) {
        if self.len + n > BUF {
            self.flush();
        }
    }

    /// Puts the first `len` of the `N` bytes of `text` (all are copied).
    #[inline(always)]
    fn put_fixed<const N: usize>(&mut self, text: &[u8; N], len: usize) {
        debug_assert!(len <= N);
        self.room(N);
        self.buf[self.len..self.len + N].copy_from_slice(text);
        self.len += len;
    }

    /// Puts `text`.
    #[inline]
    pub(crate) fn str(&mut self, text: &str) {
        let b = text.as_bytes();
        if b.len() <= SHORT {
            self.room(SHORT);
            // Copies of fixed size at either end of the text, overlapping
            // when it is shorter than they are together.
            let n = b.len();
            let at = self.len;
            if n >= 8 {
                self.buf[at..at + 8].copy_from_slice(&b[..8]);
                if n > 16 {
                    self.buf[at + 8..at + 16].copy_from_slice(&b[8..16]);
                    self.buf[at + n - 16..at + n - 8].copy_from_slice(&b[n - 16..n - 8]);
                }
                self.buf[at + n - 8..at + n].copy_from_slice(&b[n - 8..]);
            } else if n >= 4 {
                self.buf[at..at + 4].copy_from_slice(&b[..4]);
                self.buf[at + n - 4..at + n].copy_from_slice(&b[n - 4..]);
            } else {
                for (k, &c) in b.iter().enumerate() {
                    self.buf[at + k] = c;
                }
            }
            self.len += n;
        } else if b.len() <= BUF {
            self.room(b.len());
            self.buf[self.len..self.len + b.len()].copy_from_slice(b);
            self.len += b.len();
        } else {
            self.flush();
            self.out.push_str(text);
        }
    }

    /// Puts an ASCII byte.
    #[inline(always)]
    pub(crate) fn byte(&mut self, c: u8) {
        debug_assert!(c.is_ascii());
        self.room(1);
        self.buf[self.len] = c;
        self.len += 1;
    }

    /// Puts an ASCII literal (`, `, `.loc `).
    #[inline(always)]
    pub(crate) fn lit<const N: usize>(&mut self, text: &[u8; N]) {
        debug_assert!(text.is_ascii());
        self.put_fixed(text, N);
    }

    /// Puts `n` tabs, at most [`Writer::MAX_TABS`].
    #[inline(always)]
    pub(crate) fn tabs(&mut self, n: usize) {
        debug_assert!(n <= Writer::MAX_TABS, "{n} tabs asked");
        self.put_fixed(b"\t\t\t\t\t\t\t\t", n.min(Writer::MAX_TABS));
    }

    /// Puts the text of `p`, which is `text` (put as a slice when it is
    /// too long for a piece).
    #[inline(always)]
    pub(crate) fn piece(&mut self, p: &Piece, text: &str) {
        if p.len != Piece::LONG {
            self.put_fixed(&p.bytes, p.len as usize);
        } else {
            self.str(text);
        }
    }

    /// Puts a name.
    #[inline(always)]
    pub(crate) fn name(&mut self, n: &Name) {
        match n.inline_bytes() {
            Some((bytes, len)) => self.put_fixed(bytes, len),
            None => self.str(n),
        }
    }

    /// Puts ASCII `digits`, of which the first `len` count.
    #[inline(always)]
    pub(crate) fn digits<const N: usize>(&mut self, digits: &[u8; N], len: usize) {
        debug_assert!(digits[..len].is_ascii());
        self.put_fixed(digits, len);
    }

    /// The output, with everything put so far appended: for what is
    /// written into a `String` directly.
    #[inline]
    pub(crate) fn string(&mut self) -> &mut String {
        if self.len > 0 {
            self.flush();
        }
        self.out
    }

    /// Appends what is left in the buffer to the output.
    #[inline]
    pub(crate) fn finish(mut self) {
        if self.len > 0 {
            self.flush();
        }
    }
}

/// What text is printed into: a `String` (pieces pushed one at a time) or
/// a [`Writer`]. Literals and numbers are printed through it for both.
pub(crate) trait Put {
    /// Puts an ASCII byte.
    fn byte(&mut self, c: u8);
    /// Puts `text`.
    fn str(&mut self, text: &str);
    /// Puts ASCII `digits`, of which the first `len` count.
    fn digits<const N: usize>(&mut self, digits: &[u8; N], len: usize);
    /// Puts a name.
    fn name(&mut self, n: &Name);
    /// The string to print into with `write!` (what is put is in it).
    fn string(&mut self) -> &mut String;
}

impl Put for String {
    #[inline]
    fn byte(&mut self, c: u8) {
        self.push(char::from(c));
    }

    #[inline]
    fn str(&mut self, text: &str) {
        self.push_str(text);
    }

    /// One character each (a few: cheaper than checking them as UTF-8
    /// and copying).
    #[inline]
    fn digits<const N: usize>(&mut self, digits: &[u8; N], len: usize) {
        for &d in &digits[..len] {
            self.push(char::from(d));
        }
    }

    #[inline]
    fn name(&mut self, n: &Name) {
        self.push_str(n);
    }

    fn string(&mut self) -> &mut String {
        self
    }
}

impl Put for Writer<'_> {
    #[inline(always)]
    fn byte(&mut self, c: u8) {
        Writer::byte(self, c)
    }

    #[inline(always)]
    fn str(&mut self, text: &str) {
        Writer::str(self, text)
    }

    #[inline(always)]
    fn digits<const N: usize>(&mut self, digits: &[u8; N], len: usize) {
        Writer::digits(self, digits, len)
    }

    #[inline(always)]
    fn name(&mut self, n: &Name) {
        Writer::name(self, n)
    }

    fn string(&mut self) -> &mut String {
        Writer::string(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts of every length up to past the buffer, names held in place and
    /// boxed, pieces and bytes, in runs that cross the buffer's end: the
    /// text `push_str` gives.
    #[test]
    fn a_writer_writes_what_push_str_writes() {
        let alphabet = "abcdefghijklmnopqrstuvwxyzé0123456789%_$ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let texts: Vec<String> = (0..80).map(|n| alphabet.chars().cycle().skip(n).take(n).collect()).chain([alphabet.repeat(40)]).collect();
        for skew in [0, 1, 7, 100] {
            let mut out = String::from("start:");
            let mut expected = out.clone();
            let mut w = Writer::new(&mut out);
            for _ in 0..skew {
                w.byte(b'.');
                expected.push('.');
            }
            for round in 0..30 {
                for t in &texts {
                    w.str(t);
                    expected.push_str(t);
                    let name = Name::new(t);
                    w.name(&name);
                    expected.push_str(t);
                    w.piece(&Piece::new(t), t);
                    expected.push_str(t);
                    w.lit(b", ");
                    expected.push_str(", ");
                    w.tabs(round % 9);
                    expected.push_str(&"\t".repeat(round % 9));
                }
                if round % 7 == 3 {
                    w.string().push_str("<direct>");
                    expected.push_str("<direct>");
                }
            }
            w.finish();
            assert_eq!(out, expected, "skew {skew}");
        }
    }
}

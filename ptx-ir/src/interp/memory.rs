//! Memory of the reference interpreter: global allocations (kernel buffers
//! and module variables), constant, shared, local and parameter spaces, and
//! the generic address space that windows onto them. Every access is
//! bounds-checked.

use crate::eval::Quality;
use std::fmt;

/// Where generic addresses of each window start. Global allocations sit
/// above `GLOBAL_BASE`, one 4 GiB slot each.
pub const GLOBAL_BASE: u64 = 0x0001_0000_0000_0000;
pub const GLOBAL_SLOT: u64 = 1 << 32;
pub const SHARED_BASE: u64 = 0x0000_7000_0000_0000;
pub const LOCAL_BASE: u64 = 0x0000_6000_0000_0000;
pub const CONST_BASE: u64 = 0x0000_5000_0000_0000;
pub const PARAM_BASE: u64 = 0x0000_4000_0000_0000;
/// Function addresses (for indirect calls): `FUNC_BASE + index`.
pub const FUNC_BASE: u64 = 0x0000_3000_0000_0000;
const WINDOW: u64 = 0x0000_1000_0000_0000;

/// A state space of the interpreter's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Const,
    Shared,
    Local,
    Param,
}

impl Space {
    /// The window base in the generic address space.
    pub fn generic_base(self) -> u64 {
        match self {
            Space::Global => 0,
            Space::Const => CONST_BASE,
            Space::Shared => SHARED_BASE,
            Space::Local => LOCAL_BASE,
            Space::Param => PARAM_BASE,
        }
    }

    /// Which window a generic address falls in.
    pub fn of_generic(addr: u64) -> Option<Space> {
        let w = |b: u64| addr >= b && addr < b + WINDOW;
        if addr >= GLOBAL_BASE {
            Some(Space::Global)
        } else if w(SHARED_BASE) {
            Some(Space::Shared)
        } else if w(LOCAL_BASE) {
            Some(Space::Local)
        } else if w(CONST_BASE) {
            Some(Space::Const)
        } else if w(PARAM_BASE) {
            Some(Space::Param)
        } else {
            None
        }
    }
}

/// A global allocation.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// What it is, for messages (`buffer argument 2`, `variable table`).
    pub name: String,
    pub bytes: Vec<u8>,
    /// How well each byte's value is known (see [`Quality`]).
    pub quality: Vec<Quality>,
}

/// The less reliable of two qualities: `Exact` < `Approx` < `AnyNan` < `Unspecified`.
#[inline]
pub fn worst(a: Quality, b: Quality) -> Quality {
    // The common case first: an exact side changes nothing.
    match (a, b) {
        (_, Quality::Exact) => return a,
        (Quality::Exact, _) => return b,
        _ => {}
    }
    let rank = |q: Quality| match q {
        Quality::Exact => 0,
        Quality::Approx { .. } => 1,
        Quality::AnyNan => 2,
        Quality::Unspecified => 3,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// The worst quality of a run of bytes.
#[inline]
pub fn worst_of(qs: &[Quality]) -> Quality {
    // Most bytes are exact: one pass to see that, before any ranking.
    if qs.iter().all(|q| matches!(q, Quality::Exact)) {
        return Quality::Exact;
    }
    qs.iter().fold(Quality::Exact, |a, q| worst(a, *q))
}

/// Why an access failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub message: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Global memory: allocations in 4 GiB slots above [`GLOBAL_BASE`].
#[derive(Clone, Debug, Default)]
pub struct Global {
    pub allocs: Vec<Allocation>,
}

impl Global {
    /// Adds an allocation; returns its address.
    pub fn alloc(&mut self, name: impl Into<String>, bytes: Vec<u8>) -> u64 {
        let k = self.allocs.len() as u64;
        let quality = vec![Quality::Exact; bytes.len()];
        self.allocs.push(Allocation { name: name.into(), bytes, quality });
        GLOBAL_BASE + k * GLOBAL_SLOT
    }

    /// Gives allocation `k` the contents `bytes`, every byte exact (a
    /// launch's buffer in the allocation its program made for it).
    pub fn fill(&mut self, k: usize, bytes: Vec<u8>) {
        let a = &mut self.allocs[k];
        a.quality = vec![Quality::Exact; bytes.len()];
        a.bytes = bytes;
    }

    fn locate(&self, addr: u64, len: usize) -> Result<(usize, usize), Fault> {
        if addr < GLOBAL_BASE {
            return Err(Fault { message: format!("global address 0x{addr:x} is not in any allocation") });
        }
        let k = ((addr - GLOBAL_BASE) / GLOBAL_SLOT) as usize;
        let off = ((addr - GLOBAL_BASE) % GLOBAL_SLOT) as usize;
        let Some(a) = self.allocs.get(k) else {
            return Err(Fault { message: format!("global address 0x{addr:x} is not in any allocation") });
        };
        if off + len > a.bytes.len() {
            return Err(Fault { message: format!("{len}-byte access at offset {off} of {} ({} bytes) is out of bounds", a.name, a.bytes.len()) });
        }
        Ok((k, off))
    }

    /// Reads `out.len()` bytes; gives the worst quality among them.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<Quality, Fault> {
        let (k, off) = self.locate(addr, out.len())?;
        let a = &self.allocs[k];
        out.copy_from_slice(&a.bytes[off..off + out.len()]);
        Ok(worst_of(&a.quality[off..off + out.len()]))
    }

    /// The bytes and qualities of `len` bytes at `addr`, for the fast
    /// path's loads and stores: `None` exactly where [`Global::read`] and
    /// [`Global::write`] fault (the reference path then says why).
    #[inline]
    pub fn range(&self, addr: u64, len: usize) -> Option<(&[u8], &[Quality])> {
        let rel = addr.checked_sub(GLOBAL_BASE)?;
        let a = self.allocs.get((rel / GLOBAL_SLOT) as usize)?;
        let off = (rel % GLOBAL_SLOT) as usize;
        Some((a.bytes.get(off..off + len)?, a.quality.get(off..off + len)?))
    }

    /// [`Global::range`], to write.
    #[inline]
    pub fn range_mut(&mut self, addr: u64, len: usize) -> Option<(&mut [u8], &mut [Quality])> {
        let rel = addr.checked_sub(GLOBAL_BASE)?;
        let a = self.allocs.get_mut((rel / GLOBAL_SLOT) as usize)?;
        let off = (rel % GLOBAL_SLOT) as usize;
        Some((a.bytes.get_mut(off..off + len)?, a.quality.get_mut(off..off + len)?))
    }

    pub fn write(&mut self, addr: u64, data: &[u8], q: Quality) -> Result<(), Fault> {
        let (k, off) = self.locate(addr, data.len())?;
        let a = &mut self.allocs[k];
        a.bytes[off..off + data.len()].copy_from_slice(data);
        a.quality[off..off + data.len()].fill(q);
        Ok(())
    }
}

/// A flat, bounds-checked byte space (shared, local, const, param), with
/// the quality of each byte.
#[derive(Clone, Debug)]
pub struct Flat {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub quality: Vec<Quality>,
    /// The quality of bytes never written: `Exact` (zero) for constant and
    /// parameter space, `Unspecified` for shared and local memory.
    pub fill: Quality,
    /// Said after an out-of-bounds message (why the space may be too small).
    pub bounds_note: Option<&'static str>,
}

impl Flat {
    /// A space whose unwritten bytes are zero.
    pub fn new(name: &'static str, size: usize) -> Flat {
        Flat { name, bytes: vec![0; size], quality: vec![Quality::Exact; size], fill: Quality::Exact, bounds_note: None }
    }

    /// A space whose unwritten bytes have no defined value (shared, local).
    pub fn undefined(name: &'static str, size: usize) -> Flat {
        Flat { name, bytes: vec![0; size], quality: vec![Quality::Unspecified; size], fill: Quality::Unspecified, bounds_note: None }
    }

    fn check(&self, addr: u64, len: usize) -> Result<usize, Fault> {
        let a = addr as usize;
        if addr > usize::MAX as u64 / 2 || a + len > self.bytes.len() {
            let note = self.bounds_note.map(|n| format!("; {n}")).unwrap_or_default();
            return Err(Fault { message: format!("{len}-byte {} access at offset {addr} is out of bounds ({} bytes){note}", self.name, self.bytes.len()) });
        }
        Ok(a)
    }

    /// The bytes and qualities of `len` bytes at `addr`, for the fast
    /// path's loads and stores: `None` exactly where [`Flat::read`] and
    /// [`Flat::write`] fault.
    #[inline]
    pub fn range(&self, addr: u64, len: usize) -> Option<(&[u8], &[Quality])> {
        let a = usize::try_from(addr).ok()?;
        let end = a.checked_add(len)?;
        Some((self.bytes.get(a..end)?, self.quality.get(a..end)?))
    }

    /// [`Flat::range`], to write.
    #[inline]
    pub fn range_mut(&mut self, addr: u64, len: usize) -> Option<(&mut [u8], &mut [Quality])> {
        let a = usize::try_from(addr).ok()?;
        let end = a.checked_add(len)?;
        Some((self.bytes.get_mut(a..end)?, self.quality.get_mut(a..end)?))
    }

    /// Reads `out.len()` bytes; gives the worst quality among them.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<Quality, Fault> {
        let a = self.check(addr, out.len())?;
        out.copy_from_slice(&self.bytes[a..a + out.len()]);
        Ok(worst_of(&self.quality[a..a + out.len()]))
    }

    pub fn write(&mut self, addr: u64, data: &[u8], q: Quality) -> Result<(), Fault> {
        let a = self.check(addr, data.len())?;
        self.bytes[a..a + data.len()].copy_from_slice(data);
        self.quality[a..a + data.len()].fill(q);
        Ok(())
    }

    /// `len` bytes with the quality of each (for copying between spaces).
    pub fn read_bytes(&self, addr: u64, len: usize) -> Result<(Vec<u8>, Vec<Quality>), Fault> {
        let a = self.check(addr, len)?;
        Ok((self.bytes[a..a + len].to_vec(), self.quality[a..a + len].to_vec()))
    }

    /// Writes bytes with the quality of each.
    pub fn write_bytes(&mut self, addr: u64, data: &[u8], quality: &[Quality]) -> Result<(), Fault> {
        let a = self.check(addr, data.len())?;
        self.bytes[a..a + data.len()].copy_from_slice(data);
        self.quality[a..a + data.len()].copy_from_slice(&quality[..data.len()]);
        Ok(())
    }

    /// Grows the space by `size` bytes aligned to `align`; returns the offset.
    pub fn grow(&mut self, size: usize, align: usize) -> usize {
        let align = align.max(1);
        let off = self.bytes.len().div_ceil(align) * align;
        self.bytes.resize(off + size, 0);
        self.quality.resize(off + size, self.fill);
        off
    }

    /// Drops everything from `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.bytes.truncate(len);
        self.quality.truncate(len);
    }
}

/// Little-endian bytes of the low `n` bytes of `v`.
pub fn to_bytes(v: u128, n: usize) -> Vec<u8> {
    v.to_le_bytes()[..n.min(16)].to_vec()
}

/// The value of little-endian bytes.
pub fn from_bytes(b: &[u8]) -> u128 {
    let mut a = [0u8; 16];
    a[..b.len().min(16)].copy_from_slice(&b[..b.len().min(16)]);
    u128::from_le_bytes(a)
}

//! The interpreter's fast path: runs a thread over the pre-decoded
//! statements of its function ([`super::decode`]) until it reaches one that
//! is not pre-decoded (calls, returns, collectives, volatile special
//! registers ...), which `Cta::run_thread` then runs through the reference
//! `Cta::step`, or arrives at a barrier (`bar.sync`), where the thread waits
//! as `Cta::barrier` has it wait. It counts steps and the scheduling quantum, checks guards
//! and propagates `Quality` exactly as the reference path does; an
//! instruction that would fail (a fault, a misaligned vector, an evaluator
//! error), reach the step limit or note the first dependence on an inexact
//! value is left, uncounted, to the reference path, so that errors and
//! notes come from one place.

use super::decode::{result_quality, Addr, Dst, FastIns, Op, Src};
use super::exec::{Cta, Frame, Thread, Wait};
use super::memory::{worst, worst_of, Flat, Global, Space};
use super::program::FuncLayout;
use super::special::ThreadIds;
use crate::eval::{self, Quality, Val};
use crate::ir::Stmt;
use smallvec::SmallVec;

#[inline(always)]
fn read(regs: &[Val], s: &Src) -> Val {
    match *s {
        Src::Reg { slot, mask } => {
            let v = regs[slot as usize];
            Val { bits: v.bits & mask, quality: v.quality }
        }
        Src::Not { slot, mask } => {
            let v = regs[slot as usize];
            Val { bits: ((v.bits & 1) ^ 1) & mask, quality: v.quality }
        }
        Src::Imm(bits) => Val::exact(bits),
    }
}

#[inline(always)]
fn write(regs: &mut [Val], d: &Dst, v: Val) {
    let bits = if d.sext_from != 0 { eval::sext(v.bits, d.sext_from) as u128 & d.mask } else { v.bits & d.mask };
    regs[d.slot as usize] = Val { bits, quality: v.quality };
}

/// The space and address an operand points to, and the quality of the
/// register it came from (`None`: a generic address in no space).
#[inline]
fn place(addr: &Addr, regs: &[Val], local_base: usize) -> (Option<(Space, u64)>, Quality) {
    match *addr {
        Addr::Reg { slot, space, offset } => {
            let v = regs[slot as usize];
            let a = v.bits as u64;
            let at = match space {
                Some(s) => Some((s, a.wrapping_add(offset))),
                None => match Space::of_generic(a) {
                    Some(Space::Global) => Some((Space::Global, a.wrapping_add(offset))),
                    Some(s) => Some((s, (a - s.generic_base()).wrapping_add(offset))),
                    None => None,
                },
            };
            (at, v.quality)
        }
        Addr::Fixed { space, addr } => (Some((space, addr)), Quality::Exact),
        Addr::FrameLocal { offset } => (Some((Space::Local, (local_base as u64).wrapping_add(offset))), Quality::Exact),
    }
}

/// An instruction of one result computed from three sources by `compute`
/// (`None`: no value, nothing written), exact unless a source is not.
#[inline]
fn alu(regs: &mut [Val], srcs: &[Src; 3], dst: &Option<Dst>, compute: impl FnOnce(u128, u128, u128) -> Option<u128>) -> Option<()> {
    let (a, b, c) = (read(regs, &srcs[0]), read(regs, &srcs[1]), read(regs, &srcs[2]));
    let bits = compute(a.bits, b.bits, c.bits)?;
    if let Some(d) = dst {
        write(regs, d, Val { bits, quality: exact_result_quality(a.quality, b.quality, c.quality) });
    }
    Some(())
}

/// The quality of an exact result computed from sources of qualities
/// `a`, `b` and `c`: exact when they all are (the common case, tested
/// first), else [`result_quality`] of the worst.
#[inline(always)]
fn exact_result_quality(a: Quality, b: Quality, c: Quality) -> Quality {
    if a == Quality::Exact && b == Quality::Exact && c == Quality::Exact {
        return Quality::Exact;
    }
    result_quality(Quality::Exact, worst(worst(a, b), c))
}

/// Is a vector access of `bytes` at `a` misaligned (`Cta::check_vector_alignment`)?
#[inline]
fn misaligned(a: u64, bytes: usize) -> bool {
    bytes > 1 && bytes.is_power_of_two() && a % bytes as u64 != 0
}

/// The memory of one thread's view, borrowed apart from its registers.
struct Mem<'a> {
    global: &'a mut Global,
    shared: &'a mut Flat,
    local: &'a mut Flat,
    params: &'a mut Flat,
    constant: &'a Flat,
}

impl Mem<'_> {
    /// The value (little-endian) and worst quality of `size` bytes at `a`;
    /// `None` where the reference path's read faults.
    #[inline]
    fn read(&self, sp: Space, a: u64, size: usize) -> Option<Val> {
        let (bytes, qs) = match sp {
            Space::Global => self.global.range(a, size),
            Space::Const => self.constant.range(a, size),
            Space::Shared => self.shared.range(a, size),
            Space::Local => self.local.range(a, size),
            Space::Param => self.params.range(a, size),
        }?;
        Some(Val { bits: load_le(bytes), quality: worst_of(qs) })
    }

    /// Writes the low `size` bytes of `v` at `a`; `None` (having written
    /// nothing) where the reference path's write faults.
    #[inline]
    fn write(&mut self, sp: Space, a: u64, size: usize, v: Val) -> Option<()> {
        let (bytes, qs) = match sp {
            Space::Global => self.global.range_mut(a, size),
            Space::Const => return None,
            Space::Shared => self.shared.range_mut(a, size),
            Space::Local => self.local.range_mut(a, size),
            Space::Param => self.params.range_mut(a, size),
        }?;
        store_le(bytes, v.bits);
        qs.fill(v.quality);
        Some(())
    }
}

/// The little-endian value of 1 to 16 bytes (the common widths without a
/// copy through a buffer).
#[inline]
fn load_le(b: &[u8]) -> u128 {
    match b.len() {
        1 => b[0] as u128,
        2 => u16::from_le_bytes([b[0], b[1]]) as u128,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u128,
        8 => u64::from_le_bytes(b.try_into().unwrap()) as u128,
        _ => super::memory::from_bytes(b),
    }
}

/// Stores the low `b.len()` (1 to 16) bytes of `v`, little-endian (the
/// common widths as fixed-size stores, not a copy of a run of bytes).
#[inline]
fn store_le(b: &mut [u8], v: u128) {
    match b.len() {
        1 => b[0] = v as u8,
        2 => *<&mut [u8; 2]>::try_from(b).unwrap() = (v as u16).to_le_bytes(),
        4 => *<&mut [u8; 4]>::try_from(b).unwrap() = (v as u32).to_le_bytes(),
        8 => *<&mut [u8; 8]>::try_from(b).unwrap() = (v as u64).to_le_bytes(),
        n => b.copy_from_slice(&v.to_le_bytes()[..n]),
    }
}

/// The counters a run over pre-decoded statements advances.
struct Budget {
    /// What is left of the thread's scheduling quantum.
    left: u32,
    /// How many instructions may run before the launch's step limit.
    allowed: u64,
    /// Instructions this thread executed here (added to the launch's step
    /// count and to the thread's `%clock`).
    executed: u64,
    /// Has the CTA noted a dependence on an inexact value already? Until it
    /// has, an instruction whose guard or address is not exact goes to the
    /// reference path, which notes it.
    noted: bool,
    /// The barrier number and expected count of the barrier the thread
    /// arrived at (the run stops there).
    barrier: Option<(u32, Option<u32>)>,
}

impl<'p, 'm> Cta<'p, 'm> {
    /// Runs thread `t` over pre-decoded statements while the quantum
    /// (`left`) lasts; stops before a statement the reference path must run
    /// (`Op::Slow`, the end of the body, a completed collective to finish),
    /// before the instruction that would pass the step limit or note a
    /// dependence, and before one that would fail: the caller runs the
    /// next statement. Gives true when the thread arrived at a barrier
    /// and waits there.
    pub(super) fn run_fast(&mut self, t: usize, global: &mut Global, steps: &mut u64, left: &mut u32) -> bool {
        let p: &'p super::program::Bound<'p, 'm> = self.p;
        let noted = self.unspecified_dependence.borrow().is_some();
        let Thread { frames, local, carry, clock, resume, tid, linear, wait, .. } = &mut self.threads[t];
        let Some(Frame { func, pc, regs, params, local_base, .. }) = frames.last_mut() else { return false };
        let layout = &p.funcs[*func];
        if resume.is_some() {
            // A completed barrier gives no result (`Cta::finish_collective`):
            // the thread goes on after it, in a turn that is not a step.
            if !matches!(layout.fast.get(*pc), Some(FastIns { op: Op::Barrier { .. }, .. })) {
                return false;
            }
            *resume = None;
            *pc += 1;
            *left -= 1;
        }
        let ids = ThreadIds { tid: *tid, linear: *linear, block: self.launch.block, ctaid: self.ctaid, grid: self.launch.grid, dynamic_shared: self.launch.dynamic_shared, shared_size: self.shared.bytes.len(), clock: *clock };
        let mut budget = Budget { left: *left, allowed: self.launch.max_steps.saturating_sub(*steps), executed: 0, noted, barrier: None };
        let mut mem = Mem { global, shared: &mut self.shared, local, params, constant: &p.const_mem };
        run_ops(layout, regs, pc, *local_base, carry, &mut mem, &mut budget, &ids);
        *clock += budget.executed;
        *steps += budget.executed;
        *left = budget.left;
        match budget.barrier {
            Some((id, count)) => {
                *wait = Wait::at_barrier(id, count, None);
                true
            }
            None => false,
        }
    }
}

/// The loop of [`Cta::run_fast`] over one frame's statements. It takes at
/// most `min(left, allowed)` turns (one per statement): when statements
/// that are not instructions use up turns below the step limit, the
/// reference path takes the next statement sooner, in the same way.
#[allow(clippy::too_many_arguments)]
fn run_ops(layout: &FuncLayout, regs: &mut [Val], pc_out: &mut usize, local_base: usize, carry: &mut bool, mem: &mut Mem, b: &mut Budget, ids: &ThreadIds) {
    let ops = &layout.fast[..];
    let mut pc = *pc_out;
    let noted = b.noted;
    let most = u64::from(b.left).min(b.allowed) as u32;
    // Turns taken, and those of them that were not instructions (no step).
    let (mut turns, mut not_instructions) = (0u32, 0u32);
    while turns < most {
        let Some(fi) = ops.get(pc) else { break };
        if let Some((slot, negated)) = fi.guard {
            let g = regs[slot as usize];
            if matches!(fi.op, Op::Slow) || (g.quality != Quality::Exact && !noted) {
                break;
            }
            if (g.bits & 1 != 0) == negated {
                turns += 1;
                pc += 1;
                continue;
            }
        }
        pc = match fi.op {
            Op::Nop => {
                not_instructions += 1;
                pc + 1
            }
            // The reference path runs what `execute` leaves (and fails
            // there, or notes the dependence): it is not counted here.
            _ => match execute(layout, pc, &fi.op, regs, local_base, carry, mem, noted, ids) {
                Some(next) => next,
                None => break,
            },
        };
        turns += 1;
    }
    // A barrier stops the loop too: the thread arrives at it here.
    if turns < most {
        if let Some(arrival) = ops.get(pc).and_then(|fi| barrier_arrival(fi, regs, noted)) {
            b.barrier = Some(arrival);
            turns += 1;
        }
    }
    b.left -= turns;
    b.executed += u64::from(turns - not_instructions);
    *pc_out = pc;
}

/// The number and count of the barrier `fi` when the loop of [`run_ops`]
/// stopped at it to arrive there: its guard holds (the loop goes past a
/// barrier whose guard does not), and the guard, number and count are
/// exact or the CTA has noted a dependence already (else the reference
/// path notes it).
fn barrier_arrival(fi: &FastIns, regs: &[Val], noted: bool) -> Option<(u32, Option<u32>)> {
    let Op::Barrier { id, count } = &fi.op else { return None };
    let known = |q: Quality| q == Quality::Exact || noted;
    if fi.guard.is_some_and(|(slot, _)| !known(regs[slot as usize].quality)) {
        return None;
    }
    let (id, count) = (read(regs, id), count.map(|c| read(regs, &c)));
    if !known(id.quality) || count.is_some_and(|c| !known(c.quality)) {
        return None;
    }
    Some((id.bits as u32, count.map(|c| c.bits as u32)))
}

/// Carries out the pre-decoded instruction at `pc`; gives the next
/// statement, or `None` (having changed nothing that the reference path
/// would not set again to the same value) when `Cta::step` must run it.
#[allow(clippy::too_many_arguments)]
#[inline]
fn execute(layout: &FuncLayout, pc: usize, op: &Op, regs: &mut [Val], local_base: usize, carry: &mut bool, mem: &mut Mem, noted: bool, ids: &ThreadIds) -> Option<usize> {
    match op {
        Op::Alu { op, srcs, dst } => alu(regs, srcs, dst, |a, b, c| Some(op.apply(a, b, c)))?,
        Op::CheckedAlu { op, srcs, dst } => alu(regs, srcs, dst, |a, b, c| op.apply(a, b, c, carry))?,
        Op::PairSetp { op, srcs, dsts } => {
            let (a, b, c) = (read(regs, &srcs[0]), read(regs, &srcs[1]), read(regs, &srcs[2]));
            let quality = result_quality(Quality::Exact, worst(worst(a.quality, b.quality), c.quality));
            let (p, q) = op.apply(a.bits, b.bits, c.bits)?;
            for (d, v) in dsts.iter().zip([p, q]) {
                if let Some(d) = d {
                    write(regs, d, Val { bits: v as u128, quality });
                }
            }
        }
        Op::Eval { srcs, dsts } => {
            let mut bits: SmallVec<[u128; 8]> = SmallVec::new();
            let mut q = Quality::Exact;
            for s in srcs.iter() {
                let v = read(regs, s);
                bits.push(v.bits);
                q = worst(q, v.quality);
            }
            let Some(Stmt::Instr(ins)) = layout.f.body.as_ref().and_then(|b| b.get(pc)) else { return None };
            let effective = layout.decoded[pc].as_ref().and_then(|d| d.effective.as_deref()).unwrap_or(ins);
            let r = eval::eval(effective, &bits, *carry).ok()?;
            if let Some(c) = r.carry_out {
                *carry = c;
            }
            for (d, v) in dsts.iter().zip(r.dests.iter()) {
                if let Some(d) = d {
                    write(regs, d, Val { bits: v.bits, quality: result_quality(v.quality, q) });
                }
            }
        }
        Op::Copy { src, dst } => {
            if let Some(d) = dst {
                write(regs, d, read(regs, src));
            }
        }
        Op::Pack { srcs, elem, dst } => {
            let (mut bits, mut q) = (0u128, Quality::Exact);
            for (i, s) in srcs.iter().enumerate() {
                let v = read(regs, s);
                bits |= (v.bits & eval::bits_mask(*elem)) << (i as u32 * elem);
                q = worst(q, v.quality);
            }
            if let Some(d) = dst {
                write(regs, d, Val { bits, quality: result_quality(Quality::Exact, q) });
            }
        }
        Op::Unpack { src, elem, dsts } => {
            let v = read(regs, src);
            let quality = result_quality(Quality::Exact, v.quality);
            for (i, d) in dsts.iter().enumerate() {
                if let Some(d) = d {
                    write(regs, d, Val { bits: (v.bits >> (i as u32 * elem)) & eval::bits_mask(*elem), quality });
                }
            }
        }
        Op::Load { addr, size, n, vector, dsts } => {
            let (at, aq) = place(addr, regs, local_base);
            if aq != Quality::Exact && !noted {
                return None;
            }
            let (sp, a) = at?;
            let (size, n) = (*size as usize, *n as usize);
            if *vector && misaligned(a, n * size) {
                return None;
            }
            if n == 1 {
                // One element: nothing to read ahead of the writes.
                let v = mem.read(sp, a, size)?;
                if let Some(Some(d)) = dsts.first() {
                    write(regs, d, v);
                }
                return Some(pc + 1);
            }
            let mut vals = [Val::exact(0); 8];
            for (k, v) in vals.iter_mut().enumerate().take(n) {
                *v = mem.read(sp, a.wrapping_add((k * size) as u64), size)?;
            }
            for (d, v) in dsts.iter().zip(&vals[..n]) {
                if let Some(d) = d {
                    write(regs, d, *v);
                }
            }
        }
        Op::Store { addr, size, vector, srcs } => {
            let (at, aq) = place(addr, regs, local_base);
            if aq != Quality::Exact && !noted {
                return None;
            }
            let (sp, a) = at?;
            let size = *size as usize;
            if *vector && misaligned(a, srcs.len() * size) {
                return None;
            }
            for (k, s) in srcs.iter().enumerate() {
                let v = read(regs, s);
                // A fault after some elements were written: `step` writes them again.
                mem.write(sp, a.wrapping_add((k * size) as u64), size, v)?;
            }
        }
        Op::Branch { target } => return Some(*target as usize),
        Op::Special { reg, mask, dst } => write(regs, dst, Val::exact(reg.value(ids) & mask)),
        Op::FrameAddr { offset, dst } => write(regs, dst, Val::exact((local_base as u64).wrapping_add(*offset) as u128)),
        Op::Cvta { src, shift, dst } => {
            let v = read(regs, src);
            write(regs, dst, Val { bits: (v.bits as u64).wrapping_add(*shift) as u128, quality: v.quality });
        }
        Op::Nop | Op::Slow | Op::Barrier { .. } => return None,
    }
    Some(pc + 1)
}

#[cfg(test)]
mod tests {
    use super::super::decode::{alu_op, AnyAluOp, PairSetp};
    use crate::eval::{self, Quality};
    use crate::interp::{run, run_without_fast_path, KernelArg, Launch};
    use crate::ir::{Instruction, Item};

    /// The first instruction of `text` (registers of every width declared).
    fn ins(text: &str) -> Instruction {
        let src = format!(".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{ .reg .b32 %r<9>; .reg .pred %p<9>; .reg .b16 %h<9>; .reg .b64 %rd<9>; .reg .f32 %f<9>; .reg .f64 %fd<9>;\n{text}\nret; }}");
        let m = crate::parse::parse_str(&src).unwrap_or_else(|e| panic!("{text}: {e:?}"));
        m.items.iter().find_map(|i| if let Item::Func(f) = i { f.instructions().next().cloned() } else { None }).unwrap()
    }

    fn next(x: &mut u64) -> u64 {
        *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    // Integer edges (the extremes of each width, `-1`, `MININT + 1`) and
    // floating-point ones (zeros, infinities, NaNs, a subnormal, 1.0;
    // for the narrowing `cvt`, `.f32` values halfway between two `.f16`
    // or `.bf16` values, beyond the largest `.f16`, in the `.f16`
    // subnormals and halfway to the smallest, and `.f64` ones halfway
    // between two `.f32`, beyond the largest, below the smallest).
    const EDGES: [u64; 32] = [
        0,
        1,
        2,
        0x7fff,
        0x8000,
        0xffff_ffff,
        0x8000_0000_0000_0000,
        u64::MAX,
        0x8000_0000,
        0x8000_0001,
        0x3f80_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x3ff0_0000_0000_0000,
        0x7ff0_0000_0000_0000,
        0x3f80_1000,
        0x3f80_3000,
        0xbf80_8000,
        0x3f81_8000,
        0x477f_f000,
        0xc780_0000,
        0x3380_0000,
        0x3300_0000,
        0x3310_0000,
        0x387f_c000,
        0x3ff0_0000_1000_0000,
        0xbff0_0000_3000_0000,
        0x47ef_ffff_f000_0000,
        0x3690_0000_0000_0000,
        0x0000_0000_0000_0001,
        0xfff8_0000_0000_0000,
    ];

    /// The source sets every fast form is checked on: each pair of
    /// [`EDGES`] (for the first two sources), then 400 random ones; every
    /// third set cut to 7 bits.
    fn source_sets(nsrcs: usize, x: &mut u64) -> Vec<[u128; 3]> {
        let n = EDGES.len();
        (0..n * n + 400)
            .map(|k| {
                let mut s = [0u128; 3];
                for (j, v) in s.iter_mut().enumerate().take(nsrcs) {
                    *v = if k < n * n { EDGES[(k / n.pow(j as u32)) % n] as u128 } else { next(x) as u128 };
                    if k % 3 == 0 {
                        *v &= 0x7f;
                    }
                }
                s
            })
            .collect()
    }

    /// Every form decoded to an [`AluOp`] computes what the evaluator does,
    /// on edge and random values.
    #[test]
    fn alu_ops_compute_what_the_evaluator_computes() {
        let mut forms: Vec<String> = Vec::new();
        for (t, r, w) in [("u16", "%h", "%r"), ("s16", "%h", "%r"), ("u32", "%r", "%rd"), ("s32", "%r", "%rd"), ("u64", "%rd", ""), ("s64", "%rd", "")] {
            for op in ["add", "sub", "mul.lo", "mul.hi", "mad.lo", "mad.hi"] {
                let c = if op.starts_with("mad") { format!(", {r}3") } else { String::new() };
                forms.push(format!("{op}.{t} {r}1, {r}2, {r}4{c};"));
            }
            if !w.is_empty() {
                forms.push(format!("mul.wide.{t} {w}1, {r}2, {r}3;"));
                forms.push(format!("mad.wide.{t} {w}1, {r}2, {r}3, {w}4;"));
            }
            for cmp in ["eq", "ne", "lt", "le", "gt", "ge"] {
                forms.push(format!("setp.{cmp}.{t} %p1, {r}2, {r}3;"));
            }
            if t.starts_with('u') {
                for cmp in ["lo", "ls", "hi", "hs"] {
                    forms.push(format!("setp.{cmp}.{t} %p1, {r}2, {r}3;"));
                }
            }
            forms.push(format!("shr.{t} {r}1, {r}2, %r3;"));
            forms.push(format!("selp.{t} {r}1, {r}2, {r}3, %p1;"));
            forms.push(format!("mov.{t} {r}1, {r}2;"));
            for op in ["div", "rem", "min", "max"] {
                forms.push(format!("{op}.{t} {r}1, {r}2, {r}4;"));
            }
            // The carry forms are of 32- and 64-bit types.
            if !t.ends_with("16") {
                for op in ["add.cc", "addc", "addc.cc", "sub.cc", "subc", "subc.cc"] {
                    forms.push(format!("{op}.{t} {r}1, {r}2, {r}4;"));
                }
                for op in ["mad.lo.cc", "mad.hi.cc", "madc.lo", "madc.hi", "madc.lo.cc", "madc.hi.cc"] {
                    forms.push(format!("{op}.{t} {r}1, {r}2, {r}4, {r}3;"));
                }
            }
        }
        for (t, r) in [("b32", "%r2"), ("b64", "%rd2")] {
            forms.push(format!("popc.{t} %r1, {r};"));
            forms.push(format!("clz.{t} %r1, {r};"));
            forms.push(format!("brev.{t} {}1, {r};", &r[..r.len() - 1]));
        }
        for (t, r) in [("f32", "%f"), ("f64", "%fd")] {
            for cmp in ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"] {
                forms.push(format!("setp.{cmp}.{t} %p1, {r}2, {r}3;"));
            }
            for op in ["add", "add.rn", "sub", "sub.rn", "mul", "mul.rn"] {
                forms.push(format!("{op}.{t} {r}1, {r}2, {r}3;"));
            }
            forms.push(format!("fma.rn.{t} {r}1, {r}2, {r}3, {r}4;"));
            for (cmp, combine) in [("lt", "and"), ("equ", "or"), ("nan", "xor"), ("ge", "and")] {
                forms.push(format!("setp.{cmp}.{combine}.{t} %p1, {r}2, {r}3, %p4;"));
                forms.push(format!("setp.{cmp}.{combine}.{t} %p1, {r}2, {r}3, !%p4;"));
            }
        }
        // Combining integer comparisons, with the predicate as written and negated.
        for (t, r) in [("s16", "%h"), ("u32", "%r"), ("s64", "%rd"), ("b32", "%r")] {
            for (cmp, combine) in [("lt", "and"), ("ne", "or"), ("eq", "xor"), ("ge", "or")] {
                if !(t.starts_with('b') && !matches!(cmp, "eq" | "ne")) {
                    forms.push(format!("setp.{cmp}.{combine}.{t} %p1, {r}2, {r}3, %p4;"));
                    forms.push(format!("setp.{cmp}.{combine}.{t} %p1, {r}2, {r}3, !%p4;"));
                }
            }
        }
        // `set` into each destination type, from integers, bits and floats,
        // with and without a combining predicate (as written and negated).
        for (d, rd) in [("u32", "%r1"), ("s32", "%r1"), ("f32", "%f1")] {
            for (t, r, cmps) in [("u16", "%h", &["lo", "ge"][..]), ("s32", "%r", &["lt", "ne"]), ("b64", "%rd", &["eq"]), ("f32", "%f", &["gtu", "le", "nan"]), ("f64", "%fd", &["num", "neu", "lt"])] {
                for cmp in cmps {
                    forms.push(format!("set.{cmp}.{d}.{t} {rd}, {r}2, {r}3;"));
                    forms.push(format!("set.{cmp}.and.{d}.{t} {rd}, {r}2, {r}3, %p4;"));
                    forms.push(format!("set.{cmp}.xor.{d}.{t} {rd}, {r}2, {r}3, !%p4;"));
                }
            }
        }
        // `slct` of each width by an `.s32` or `.f32` (flushed or not) `c`.
        for (d, r) in [("b16", "%h"), ("s16", "%h"), ("u32", "%r"), ("f32", "%f"), ("b64", "%rd"), ("f64", "%fd")] {
            forms.push(format!("slct.{d}.s32 {r}1, {r}2, {r}3, %r4;"));
            forms.push(format!("slct.{d}.f32 {r}1, {r}2, {r}3, %f4;"));
            forms.push(format!("slct.ftz.{d}.f32 {r}1, {r}2, {r}3, %f4;"));
        }
        // Narrowing floating-point `cvt` in each rounding to a float.
        for rnd in ["rn", "rz", "rm", "rp"] {
            for (d, rd) in [("f16", "%h"), ("bf16", "%h")] {
                forms.push(format!("cvt.{rnd}.{d}.f32 {rd}1, %f2;"));
                forms.push(format!("cvt.{rnd}.{d}.f64 {rd}1, %fd2;"));
            }
            forms.push(format!("cvt.{rnd}.f32.f64 %f1, %fd2;"));
        }
        for (t, r) in [("b16", "%h"), ("b32", "%r"), ("b64", "%rd"), ("pred", "%p")] {
            for op in ["and", "or", "xor"] {
                forms.push(format!("{op}.{t} {r}1, {r}2, {r}3;"));
            }
            forms.push(format!("not.{t} {r}1, {r}2;"));
            forms.push(format!("mov.{t} {r}1, {r}2;"));
            if t != "pred" {
                forms.push(format!("shl.{t} {r}1, {r}2, %r3;"));
                forms.push(format!("shr.{t} {r}1, {r}2, %r3;"));
                forms.push(format!("setp.eq.{t} %p1, {r}2, {r}3;"));
                forms.push(format!("selp.{t} {r}1, {r}2, {r}3, %p1;"));
            }
        }
        forms.push("selp.f32 %f1, %f2, %f3, %p1;".into());
        forms.push("selp.f64 %fd1, %fd2, %fd3, %p1;".into());
        forms.push("mov.f32 %f1, %f2;".into());
        // Integer-to-integer `cvt`: every pair of widths and signedness.
        for (d, rd) in [("u8", "%h"), ("s8", "%h"), ("u16", "%h"), ("s16", "%h"), ("u32", "%r"), ("s32", "%r"), ("u64", "%rd"), ("s64", "%rd")] {
            for (a, ra) in [("u8", "%h"), ("s8", "%h"), ("u16", "%h"), ("s16", "%h"), ("u32", "%r"), ("s32", "%r"), ("u64", "%rd"), ("s64", "%rd")] {
                forms.push(format!("cvt.{d}.{a} {rd}1, {ra}2;"));
            }
        }
        // The other scalar `cvt`s, through the evaluator's conversion:
        // integer and float in both directions in each rounding, with and
        // without `.sat` and `.ftz`, float to float both ways, to an
        // integral value, and saturating integers.
        for (i, ri) in [("u8", "%h"), ("s16", "%h"), ("u32", "%r"), ("s32", "%r"), ("u64", "%rd"), ("s64", "%rd")] {
            for (f, rf) in [("f16", "%h"), ("bf16", "%h"), ("f32", "%f"), ("f64", "%fd")] {
                for rnd in ["rn", "rz", "rm", "rp"] {
                    forms.push(format!("cvt.{rnd}.{f}.{i} {rf}1, {ri}2;"));
                    forms.push(format!("cvt.{rnd}i.{i}.{f} {ri}1, {rf}2;"));
                }
                forms.push(format!("cvt.rzi.sat.{i}.{f} {ri}1, {rf}2;"));
            }
            forms.push(format!("cvt.rn.sat.f32.{i} %f1, {ri}2;"));
            forms.push(format!("cvt.rm.ftz.f32.{i} %f1, {ri}2;"));
            forms.push(format!("cvt.rni.ftz.{i}.f32 {ri}1, %f2;"));
            forms.push(format!("cvt.f32.{i} %f1, {ri}2;"));
            forms.push(format!("cvt.sat.{i}.s64 {ri}1, %rd2;"));
            forms.push(format!("cvt.sat.{i}.u16 {ri}1, %h2;"));
        }
        for rnd in ["rn", "rz", "rm", "rp"] {
            forms.push(format!("cvt.{rnd}.ftz.f32.f64 %f1, %fd2;"));
            forms.push(format!("cvt.{rnd}.sat.f32.f64 %f1, %fd2;"));
            forms.push(format!("cvt.{rnd}i.f32.f32 %f1, %f2;"));
            forms.push(format!("cvt.{rnd}i.ftz.f32.f32 %f1, %f2;"));
            forms.push(format!("cvt.{rnd}i.f64.f64 %fd1, %fd2;"));
        }
        for (d, rd, a, ra) in [("f64", "%fd", "f32", "%f"), ("f32", "%f", "f16", "%h"), ("f64", "%fd", "bf16", "%h"), ("f32", "%f", "f32", "%f")] {
            forms.push(format!("cvt.{d}.{a} {rd}1, {ra}2;"));
            if d == "f32" || a == "f32" {
                forms.push(format!("cvt.ftz.{d}.{a} {rd}1, {ra}2;"));
            }
            forms.push(format!("cvt.sat.{d}.{a} {rd}1, {ra}2;"));
        }
        let mut x = 7u64;
        for text in &forms {
            let i = ins(text);
            let nsrcs = i.operands.len() - 1;
            let op = alu_op(&i, nsrcs).unwrap_or_else(|| panic!("`{text}` is not decoded to an AluOp"));
            for (k, s) in source_sets(nsrcs, &mut x).into_iter().enumerate() {
                let carry_in = k % 2 == 1;
                let want = eval::eval(&i, &s[..nsrcs], carry_in).unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(want.dests.len(), 1);
                let mut carry = carry_in;
                let got = match op {
                    AnyAluOp::Common(op) => Some(op.apply(s[0], s[1], s[2])),
                    AnyAluOp::Checked(op) => op.apply(s[0], s[1], s[2], &mut carry),
                };
                match got {
                    Some(bits) => {
                        assert_eq!(want.dests[0].quality, Quality::Exact, "{text} on {s:x?}");
                        assert_eq!(bits, want.dests[0].bits, "{text} on {s:x?}");
                        assert_eq!(carry, want.carry_out.unwrap_or(carry_in), "the carry of {text} on {s:x?} with {carry_in}");
                    }
                    // Left to the reference path: the evaluator gives no exact value.
                    None => {
                        assert_ne!(want.dests[0].quality, Quality::Exact, "{text} on {s:x?}");
                        assert_eq!(carry, carry_in, "{text} on {s:x?}");
                    }
                }
            }
        }
        // Forms with modifiers the AluOps do not model are left to the evaluator.
        for text in ["setp.lt.ftz.f32 %p1, %f2, %f3;", "min.relu.s32 %r1, %r2, %r3;", "sad.u32 %r1, %r2, %r3, %r4;", "add.sat.s32 %r1, %r2, %r3;", "add.u16x2 %r1, %r2, %r3;", "setp.lt.and.ftz.f32 %p1, %f2, %f3, %p2;", "setp.lt.and.b32 %p1, %r2, %r3, %p2;", "setp.lt.and.f16 %p1, %h2, %h3, %p2;", "cvt.rni.f32.f64 %f1, %fd2;", "cvt.rn.u32.f32 %r1, %f2;", "cvt.rz.s32.s16 %r1, %h2;", "cvt.ftz.f64.s32 %fd1, %r2;", "cvt.rn.f16x2.f32 %r1, %f2, %f3;", "add.rz.f32 %f1, %f2, %f3;", "mul.ftz.f32 %f1, %f2, %f3;", "mul.wide.u64 %rd1, %rd2, %rd3;", "setp.lt.b32 %p1, %r1, %r2;", "set.lt.ftz.u32.f32 %r1, %f2, %f3;", "set.lt.f16.f32 %h1, %f2, %f3;", "set.lt.u32.f16 %r1, %h2, %h3;", "set.lt.u32.f16x2 %r1, %r2, %r3;", "set.lt.u32.b32 %r1, %r2, %r3;", "slct.u32.s32 %r1, %r2, -%r3, %r4;"] {
            let i = ins(text);
            assert_eq!(alu_op(&i, i.operands.len() - 1), None, "{text}");
        }
    }

    /// Every `setp` with a `p|q` destination decoded to a [`PairSetp`]
    /// computes both predicates as the evaluator does, on edge and random
    /// values; the forms it does not model are left to the evaluator.
    #[test]
    fn pair_setps_compute_what_the_evaluator_computes() {
        let mut forms: Vec<String> = Vec::new();
        for (t, r, cmps) in [("s16", "%h", &["lt", "ge"][..]), ("u32", "%r", &["lo", "hs", "ne"]), ("s64", "%rd", &["le", "gt"]), ("b32", "%r", &["eq", "ne"]), ("f32", "%f", &["lt", "equ", "nan", "geu"]), ("f64", "%fd", &["neu", "num", "le"])] {
            for cmp in cmps {
                forms.push(format!("setp.{cmp}.{t} %p1|%p2, {r}2, {r}3;"));
                forms.push(format!("setp.{cmp}.{t} %p1|_, {r}2, {r}3;"));
                for combine in ["and", "or", "xor"] {
                    forms.push(format!("setp.{cmp}.{combine}.{t} %p1|%p2, {r}2, {r}3, %p4;"));
                    forms.push(format!("setp.{cmp}.{combine}.{t} %p1|%p2, {r}2, {r}3, !%p4;"));
                }
            }
        }
        let mut x = 11u64;
        for text in &forms {
            let i = ins(text);
            let nsrcs = i.operands.len() - 1;
            let op = PairSetp::of(&i, nsrcs).unwrap_or_else(|| panic!("`{text}` is not decoded to a PairSetp"));
            for s in source_sets(nsrcs, &mut x) {
                let want = eval::eval(&i, &s[..nsrcs], false).unwrap_or_else(|e| panic!("{text}: {e}"));
                let (p, q) = op.apply(s[0], s[1], s[2]).unwrap_or_else(|| panic!("{text} on {s:x?} gives no value"));
                assert!(want.dests.iter().all(|v| v.quality == Quality::Exact), "{text} on {s:x?}");
                assert_eq!([p as u128, q as u128][..want.dests.len()], want.dests.iter().map(|v| v.bits).collect::<Vec<_>>()[..], "{text} on {s:x?}");
            }
        }
        for text in ["setp.lt.ftz.f32 %p1|%p2, %f2, %f3;", "setp.lt.f16x2 %p1|%p2, %r2, %r3;", "setp.lt.s32 %p1, %r2, %r3;", "setp.lt.and.s32 %p1|%p2, %r2, -%r3, %p4;"] {
            let i = ins(text);
            assert_eq!(PairSetp::of(&i, i.operands.len() - 1), None, "{text}");
        }
    }

    /// A kernel using every pre-decoded kind (and values that are not
    /// exact) runs to the same outputs with and without the fast path.
    #[test]
    fn the_fast_path_runs_like_the_reference_path() {
        let text = r#".version 8.7
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
	.local .align 8 .b8 scratch[64];
	.shared .align 16 .b8 sh[1024];
	.reg .pred %p<4>;
	.reg .b16 %h<4>;
	.reg .b32 %r<22>;
	.reg .f32 %f<4>;
	.reg .f64 %fd<2>;
	.reg .b64 %rd<12>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, 0;
	mov.b32 %r4, 0x9e3779b9;
	cvt.u64.u32 %rd2, %r2;
	shl.b64 %rd3, %rd2, 4;
	add.s64 %rd4, %rd1, %rd3;
	mov.u32 %r10, sh;
	shl.b32 %r11, %r2, 4;
	add.s32 %r11, %r10, %r11;
L:
	mad.lo.s32 %r4, %r4, 1664525, %r3;
	xor.b32 %r5, %r4, %r2;
	shr.s32 %r6, %r5, 3;
	mul.hi.u32 %r7, %r5, %r4;
	mul.wide.s32 %rd5, %r6, %r7;
	add.cc.u32 %r8, %r5, %r7;
	addc.u32 %r9, %r8, %r6;
	st.local.u32 [scratch+8], %r9;
	ld.local.s16 %r12, [scratch+8];
	cvt.rn.f32.s32 %f1, %r12;
	div.approx.f32 %f2, %f1, 0f40400000;
	cvt.rn.f16.f32 %h1, %f2;
	cvt.u32.u16 %r20, %h1;
	cvt.f64.f32 %fd1, %f1;
	mul.rn.f64 %fd1, %fd1, 0d3fb999999999999a;
	cvt.rz.bf16.f64 %h1, %fd1;
	cvt.u32.u16 %r21, %h1;
	cvt.rm.f32.f64 %f3, %fd1;
	st.shared.v2.u32 [%r11], {%r8, %r9};
	ld.shared.v2.u32 {%r13, %r14}, [%r11];
	setp.lt.s32 %p1, %r6, 0;
	setp.gt.and.f32 %p3, %f3, 0f3f800000, %p1;
	setp.ne.or.s32 %p3, %r20, %r21, !%p3;
	selp.b32 %r20, %r20, %r21, %p3;
	selp.b32 %r15, %r13, %r14, %p1;
	@!%p1 add.s32 %r15, %r15, %r16;
	add.s32 %r3, %r3, 1;
	setp.lt.u32 %p2|%p3, %r3, %r1;
	cvt.rn.f64.s32 %fd1, %r12;
	cvt.rzi.sat.u16.f64 %h1, %fd1;
	@%p2 bra L;
	bar.sync 0;
	mov.u64 %rd6, scratch;
	cvta.local.u64 %rd7, %rd6;
	cvta.to.local.u64 %rd8, %rd7;
	cvta.to.global.u64 %rd9, %rd1;
	cvta.shared.u32 %r17, %r11;
	mov.u32 %r18, %laneid;
	mov.u32 %r19, %ntid.x;
	mov.u16 %h1, %ctaid.x;
	cvt.u32.u64 %r16, %rd8;
	xor.b32 %r9, %r9, %r16;
	cvt.u32.u64 %r16, %rd9;
	xor.b32 %r9, %r9, %r16;
	xor.b32 %r9, %r9, %r17;
	mad.lo.u32 %r9, %r18, %r19, %r9;
	cvt.u32.u16 %r16, %h1;
	add.u32 %r9, %r9, %r16;
	xor.b32 %r9, %r9, %r20;
	mov.b64 %rd10, {%r15, %r9};
	mov.b64 {%r15, _}, %rd10;
	mov.b32 {%h2, %h3}, %r9;
	mov.b32 %r9, {%h3, %h2};
	st.global.v2.u32 [%rd4], {%r15, %r9};
	st.global.f32 [%rd4+8], %f2;
	st.global.u32 [%rd4+12], %r12;
	ret;
}
"#;
        let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap();
        let mut l = Launch::new("k", [2, 1, 1], [40, 1, 1]);
        l.buffers.push(vec![0; 40 * 16]);
        l.args = vec![KernelArg::Buffer(0), KernelArg::Scalar { ty: crate::isa::ScalarType::U32, bits: 5 }];
        // `mov` of special registers and addresses, packing and unpacking, `cvta` and `bar.sync` are pre-decoded.
        let prog = crate::interp::program::Program::prepare(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), l.buffers.len()).unwrap();
        let layout = &prog.funcs[prog.func_index["k"]];
        for (s, fi) in layout.f.body.as_ref().unwrap().iter().zip(&layout.fast) {
            if let crate::ir::Stmt::Instr(i) = s {
                if matches!(i.opcode, crate::isa::Opcode::MOV | crate::isa::Opcode::CVTA | crate::isa::Opcode::BAR) {
                    assert!(!matches!(fi.op, super::super::decode::Op::Slow), "{i:?} is not pre-decoded");
                }
                // Every `setp` and `cvt` here is computed without the evaluator.
                if matches!(i.opcode, crate::isa::Opcode::SETP | crate::isa::Opcode::CVT) {
                    assert!(matches!(fi.op, super::super::decode::Op::Alu { .. } | super::super::decode::Op::CheckedAlu { .. } | super::super::decode::Op::PairSetp { .. }), "{i:?} is not computed here");
                }
                if i.operands.iter().any(|o| matches!(o, crate::ir::Operand::Vector(_))) && i.opcode == crate::isa::Opcode::MOV {
                    assert!(matches!(fi.op, super::super::decode::Op::Pack { .. } | super::super::decode::Op::Unpack { .. }), "{i:?} is not packed or unpacked");
                }
            }
        }
        let fast = run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l);
        let slow = run_without_fast_path(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l);
        assert_eq!(fast, slow);
        let out = fast.unwrap();
        // %r16 is never written: the guarded add makes some results unspecified, and the run says so.
        assert!(out.buffers[0].quality.contains(&Quality::Unspecified));
        assert!(out.buffers[0].quality.iter().any(|q| matches!(q, Quality::Approx { .. })));
        // Errors: the same message at the same place, with the same step count before them.
        for (limit, n) in [(50, 5), (100_000, 5)] {
            l.max_steps = limit;
            l.args[1] = KernelArg::Scalar { ty: crate::isa::ScalarType::U32, bits: n };
            let fast = run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l);
            assert_eq!(fast, run_without_fast_path(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l));
        }
        l.buffers[0].truncate(40 * 16 - 4);
        let fast = run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l);
        assert!(matches!(fast, Err(crate::interp::RunError::Fault { .. })), "{fast:?}");
        assert_eq!(fast, run_without_fast_path(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l));
    }
}

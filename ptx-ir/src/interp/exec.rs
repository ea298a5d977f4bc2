//! Executing one CTA: thread state, the scheduler, and the instructions the
//! interpreter carries out itself (memory, control flow, calls, special
//! registers, addresses); pure instructions go to [`crate::eval`].

use super::memory::{from_bytes, to_bytes, worst, Fault, Flat, Global, Space, FUNC_BASE, GLOBAL_BASE, GLOBAL_SLOT};
use super::program::{arg_bytes, type_bytes, Bound, Regs, VarLoc};
use super::{Launch, RunError};
use crate::eval::{self, imm_bits, Quality, Val};
use crate::ir::{AddrBase, Instruction, Operand, PairPred, Prefix, SpecialReg, Stmt};
use crate::isa::{Mod, Opcode, ScalarType, StateSpace, TypeClass};
use smallvec::SmallVec;

/// One call frame.
pub struct Frame {
    pub func: usize,
    pub pc: usize,
    pub regs: Regs,
    /// Parameter area: the signature's parameters and the body's `.param`s.
    pub params: Flat,
    /// Start of the frame's local variables in the thread's local memory.
    pub local_base: usize,
    /// Where the caller wants the results: its `(ret, ...)` list.
    pub ret_to: Option<(usize, usize)>,
}

/// Why a thread is not running.
#[derive(Clone, Debug, PartialEq)]
pub enum Wait {
    Running,
    /// At `bar`/`barrier` number `id`, expecting `count` threads (all if None);
    /// `arrive` threads do not wait. `pred`: the predicate `bar.red` reduces.
    Barrier { id: u32, count: Option<u32>, pred: Option<Val> },
    /// At a warp-collective instruction (statement `pc` of function `func`).
    Warp { func: usize, pc: usize, mask: u32, srcs: Vec<Val> },
    /// At an mbarrier test whose phase is not complete (the mbarrier's shared offset).
    Mbarrier { addr: u64 },
    Exited,
}

impl Wait {
    /// Waiting at barrier `id`, taken modulo the sixteen barriers a CTA has
    /// (the one place both paths decide which barrier a number means).
    pub fn at_barrier(id: u32, count: Option<u32>, pred: Option<Val>) -> Wait {
        Wait::Barrier { id: id & 15, count, pred }
    }
}

pub struct Thread {
    pub tid: [u32; 3],
    pub linear: u32,
    /// The call stack, the kernel's frame held in place.
    pub frames: SmallVec<[Frame; 1]>,
    pub local: Flat,
    pub carry: bool,
    pub wait: Wait,
    /// Results a completed collective left for this thread (written on
    /// resume): a barrier's three fit without an allocation.
    pub resume: Option<SmallVec<[Val; 3]>>,
    /// Instructions this thread executed: its `%clock`.
    pub clock: u64,
}

pub struct Cta<'p, 'm> {
    pub p: &'p Bound<'p, 'm>,
    pub launch: &'p Launch,
    pub ctaid: [u32; 3],
    pub threads: Vec<Thread>,
    pub shared: Flat,
    /// The first place where control flow or an address depended on a value
    /// the program leaves unspecified (see [`super::RunOutput::depends_on_unspecified`]).
    pub unspecified_dependence: std::cell::RefCell<Option<String>>,
    /// Asynchronous copies in flight and mbarrier objects.
    pub asyncs: super::async_copy::AsyncState,
    /// `wgmma.mma_async` operations in flight, per thread.
    pub wgmma: super::matrix::wgmma::State,
    /// What `vprintf` printed.
    pub printed: Vec<super::Printed>,
    /// The last instruction [`Cta::decoded`] looked up, and its prepared form.
    last_decoded: std::cell::Cell<(*const Instruction, Option<&'p super::program::Decoded>)>,
}

/// What running a thread for a while ended with.
enum Stop {
    Blocked,
    Exited,
    Quantum,
}

fn trunc(v: u128, bits: u32) -> u128 {
    v & eval::bits_mask(bits)
}

impl<'p, 'm> Cta<'p, 'm> {
    pub fn new(p: &'p Bound<'p, 'm>, launch: &'p Launch, ctaid: [u32; 3]) -> Cta<'p, 'm> {
        let [bx, by, bz] = launch.block;
        let buffer_addrs: Vec<u64> = p.buffer_allocs.iter().map(|&k| GLOBAL_BASE + k as u64 * GLOBAL_SLOT).collect();
        let kf = &p.funcs[p.kernel];
        // The kernel's parameter area holds the arguments.
        let mut params = Flat::new("param", kf.param_size);
        for (a, loc) in launch.args.iter().zip(&kf.params) {
            if let VarLoc::Param(off) = loc {
                let _ = params.write(*off, &arg_bytes(a, &buffer_addrs), Quality::Exact);
            }
        }
        let mut threads = Vec::with_capacity((bx * by * bz) as usize);
        for z in 0..bz {
            for y in 0..by {
                for x in 0..bx {
                    let linear = x + y * bx + z * bx * by;
                    let frame = Frame { func: p.kernel, pc: 0, regs: vec![Val::unspecified(); kf.nslots], params: params.clone(), local_base: p.module_local_size, ret_to: None };
                    threads.push(Thread { tid: [x, y, z], linear, frames: smallvec::smallvec![frame], local: Flat::undefined("local", p.module_local_size + kf.local_size), carry: false, wait: Wait::Running, resume: None, clock: 0 });
                }
            }
        }
        let mut shared = Flat::undefined("shared", p.shared_size);
        if p.has_dynamic_shared && launch.dynamic_shared == 0 {
            shared.bounds_note = Some("the module declares `.extern .shared` arrays but the launch gives them 0 bytes (`--dynamic-shared BYTES`)");
        }
        let asyncs = super::async_copy::AsyncState::new(threads.len(), shared.bytes.len());
        let wgmma = super::matrix::wgmma::State::new(threads.len());
        Cta { p, launch, ctaid, threads, shared, asyncs, wgmma, printed: Vec::new(), unspecified_dependence: Default::default(), last_decoded: std::cell::Cell::new((std::ptr::null(), None)) }
    }

    pub(super) fn thread_name(&self, t: usize) -> String {
        let th = &self.threads[t];
        format!("ctaid ({},{},{}) tid ({},{},{})", self.ctaid[0], self.ctaid[1], self.ctaid[2], th.tid[0], th.tid[1], th.tid[2])
    }

    pub(super) fn here(&self, t: usize) -> String {
        let Some(f) = self.threads[t].frames.last() else { return format!("{} (after its exit)", self.p.file) };
        self.p.position(f.func, f.pc)
    }

    /// Runs the CTA to completion.
    pub fn run(&mut self, mut global: Global, steps: &mut u64) -> (Global, Result<(), RunError>) {
        let r = self.run_inner(&mut global, steps);
        (global, r)
    }

    fn run_inner(&mut self, global: &mut Global, steps: &mut u64) -> Result<(), RunError> {
        loop {
            let mut progress = false;
            for t in 0..self.threads.len() {
                if self.threads[t].wait != Wait::Running {
                    continue;
                }
                progress = true;
                match self.run_thread(t, global, steps)? {
                    Stop::Exited | Stop::Blocked | Stop::Quantum => {}
                }
            }
            if self.threads.iter().all(|t| t.wait == Wait::Exited) {
                return self.finish_async(global);
            }
            progress |= self.release_barriers();
            progress |= super::warp::release_collectives(self)?;
            progress |= super::mbarrier::release_waiters(self)?;
            progress |= super::matrix::release(self, global)?;
            if !progress {
                if let Some(e) = super::matrix::diagnose_stuck(self) {
                    return Err(e);
                }
                return Err(RunError::Deadlock(self.describe_deadlock()));
            }
        }
    }

    /// Where the blocked threads of a deadlocked CTA wait, grouped by place:
    /// "CTA (0,0,0): 32 threads (first tid (0,0,0)) wait at input.ptx:17:2 on
    /// barrier 1 (expects 64 threads, 32 arrived); ...".
    pub(super) fn describe_deadlock(&self) -> String {
        let alive = self.threads.iter().filter(|t| t.wait != Wait::Exited).count();
        let mut groups: Vec<(String, usize, usize)> = Vec::new();
        for (k, t) in self.threads.iter().enumerate() {
            let what = match &t.wait {
                Wait::Exited | Wait::Running => continue,
                Wait::Barrier { id, count, .. } => {
                    let arrived = self.threads.iter().filter(|u| matches!(u.wait, Wait::Barrier { id: i, .. } if i == *id)).count();
                    let expects = count.map(|c| c as usize).unwrap_or(alive);
                    format!("barrier {id} (expects {expects} threads, {arrived} arrived)")
                }
                Wait::Warp { mask, .. } => format!("a warp collective with member mask {mask:#010x}"),
                Wait::Mbarrier { addr } => super::mbarrier::describe_wait(*addr),
            };
            let f = t.frames.last().unwrap();
            let key = format!("{} on {what}", self.p.position(f.func, f.pc));
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1 += 1,
                None => groups.push((key, 1, k)),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(key, n, first)| {
                let th = &self.threads[*first];
                format!("{n} thread(s) (first tid ({},{},{})) wait at {key}", th.tid[0], th.tid[1], th.tid[2])
            })
            .collect();
        format!("CTA ({},{},{}): {}", self.ctaid[0], self.ctaid[1], self.ctaid[2], parts.join("; "))
    }

    /// Releases every barrier all of whose expected threads have arrived.
    fn release_barriers(&mut self) -> bool {
        // The barriers some thread waits at (ids are below 16), found in one
        // pass: most rounds of the scheduler have none, or one.
        let waited = self.threads.iter().fold(0u16, |ids, t| match t.wait {
            Wait::Barrier { id, .. } => ids | 1 << id,
            _ => ids,
        });
        let mut released = false;
        for id in (0..16u32).filter(|id| waited >> id & 1 != 0) {
            let arrived: Vec<usize> = (0..self.threads.len()).filter(|&k| matches!(self.threads[k].wait, Wait::Barrier { id: i, .. } if i == id)).collect();
            let alive = self.threads.iter().filter(|t| t.wait != Wait::Exited).count();
            let count = arrived.iter().find_map(|&k| match self.threads[k].wait {
                Wait::Barrier { count, .. } => count,
                _ => None,
            });
            let needed = count.map(|c| c as usize).unwrap_or(alive).min(alive);
            if arrived.len() < needed {
                continue;
            }
            // `bar.red`: the reduction over the participants' predicates.
            let preds: Vec<Val> = arrived.iter().filter_map(|&k| match self.threads[k].wait {
                Wait::Barrier { pred, .. } => pred,
                _ => None,
            }).collect();
            let popc = preds.iter().filter(|p| p.bits & 1 == 1).count() as u128;
            let all = preds.iter().all(|p| p.bits & 1 == 1);
            let any = preds.iter().any(|p| p.bits & 1 == 1);
            // A reduction over a predicate some thread does not know is not known.
            let quality = if preds.iter().all(|p| p.quality == Quality::Exact) { Quality::Exact } else { Quality::Unspecified };
            let known = |bits: u128| Val { bits, quality };
            for k in arrived {
                let th = &mut self.threads[k];
                th.wait = Wait::Running;
                th.resume = Some(smallvec::smallvec![known(popc), known(all as u128), known(any as u128)]);
            }
            released = true;
        }
        released
    }

    /// Runs thread `t` until it blocks, exits, or has run a while.
    fn run_thread(&mut self, t: usize, global: &mut Global, steps: &mut u64) -> Result<Stop, RunError> {
        const QUANTUM: u32 = 10_000;
        let mut left = QUANTUM;
        while left > 0 {
            // Pre-decoded statements first (fast.rs); the one it stops at runs here.
            // Not while copies or mbarriers are live: every access is then
            // checked against them (`mem_read`/`mem_write`), which the fast
            // path's loads and stores do not do; nor while the thread has a
            // wgmma in flight (its register accesses are checked).
            if self.p.fast_path && !self.asyncs.watching() && !self.wgmma.watching(t) {
                if self.run_fast(t, global, steps, &mut left) {
                    return Ok(Stop::Blocked);
                }
                if left == 0 {
                    break;
                }
            }
            left -= 1;
            let Some(frame) = self.threads[t].frames.last() else {
                self.threads[t].wait = Wait::Exited;
                return Ok(Stop::Exited);
            };
            let (func, pc) = (frame.func, frame.pc);
            let body = self.p.funcs[func].f.body.as_ref().unwrap();
            let Some(stmt) = body.get(pc) else {
                // Falling off the end of a body returns.
                self.do_return(t)?;
                continue;
            };
            let Stmt::Instr(ins) = stmt else {
                self.threads[t].frames.last_mut().unwrap().pc += 1;
                continue;
            };
            // A collective or barrier that completed: write its results and go on.
            if let Some(results) = self.threads[t].resume.take() {
                self.finish_collective(t, ins, results)?;
                self.threads[t].frames.last_mut().unwrap().pc += 1;
                continue;
            }
            *steps += 1;
            self.threads[t].clock += 1;
            if *steps > self.launch.max_steps {
                return Err(RunError::StepLimit { limit: self.launch.max_steps, thread: self.thread_name(t), at: self.here(t) });
            }
            if self.wgmma.in_flight(t) {
                super::matrix::wgmma::check_access(self, t, ins)?;
            }
            if let Some(g) = ins.guard {
                let p = self.reg(t, g.reg, 0);
                self.note_dependence(t, p.quality, "guard predicate");
                let v = p.bits & 1 != 0;
                if v == g.negated {
                    self.threads[t].frames.last_mut().unwrap().pc += 1;
                    continue;
                }
            }
            match self.step(t, ins, global)? {
                Flow::Next => self.threads[t].frames.last_mut().unwrap().pc += 1,
                Flow::Jumped => {}
                Flow::Block => return Ok(Stop::Blocked),
                Flow::Exit => {
                    self.threads[t].wait = Wait::Exited;
                    return Ok(Stop::Exited);
                }
            }
            if self.threads[t].wait == Wait::Exited {
                return Ok(Stop::Exited);
            }
        }
        Ok(Stop::Quantum)
    }

    // ----- registers and operands -------------------------------------------------------

    /// Records the first guard, branch index or address that is not exact.
    pub(super) fn note_dependence(&self, t: usize, q: Quality, what: &str) {
        if q != Quality::Exact && self.unspecified_dependence.borrow().is_none() {
            *self.unspecified_dependence.borrow_mut() = Some(format!("{}: {what} of thread {} is not exactly determined", self.here(t), self.thread_name(t)));
        }
    }

    pub(super) fn reg(&self, t: usize, r: crate::ir::RegId, lane: u8) -> Val {
        let f = self.threads[t].frames.last().unwrap();
        let base = self.p.funcs[f.func].reg_base[r.0 as usize] as usize;
        f.regs[base + lane as usize]
    }

    pub(super) fn reg_width(&self, t: usize, r: crate::ir::RegId) -> (ScalarType, Option<u8>) {
        let f = self.threads[t].frames.last().unwrap();
        let reg = self.p.funcs[f.func].f.reg(r);
        (reg.ty, reg.vector)
    }

    fn set_reg(&mut self, t: usize, r: crate::ir::RegId, lane: u8, v: Val, written_ty: Option<ScalarType>) {
        let (rty, _) = self.reg_width(t, r);
        let bits = rty.bits().max(1);
        // A narrower result in a wider register: sign-extended for signed types, else zero-extended.
        let value = match written_ty {
            Some(w) if w.bits() < bits && w.class() == TypeClass::Signed => trunc(eval::sext(v.bits, w.bits()) as u128, bits),
            Some(w) if w.bits() < bits => trunc(v.bits, w.bits()),
            _ => trunc(v.bits, bits),
        };
        let f = self.threads[t].frames.last_mut().unwrap();
        let base = self.p.funcs[f.func].reg_base[r.0 as usize] as usize;
        f.regs[base + lane as usize] = Val { bits: value, quality: v.quality };
    }

    fn special(&self, t: usize, s: SpecialReg, sel: Option<crate::ir::Selector>) -> u128 {
        self.thread_ids(t).value(s, sel)
    }

    /// What thread `t`'s special registers are read from.
    pub(super) fn thread_ids(&self, t: usize) -> super::special::ThreadIds {
        let th = &self.threads[t];
        super::special::ThreadIds { tid: th.tid, linear: th.linear, block: self.launch.block, ctaid: self.ctaid, grid: self.launch.grid, dynamic_shared: self.launch.dynamic_shared, shared_size: self.shared.bytes.len(), clock: th.clock }
    }

    /// The prepared form of `ins` when it is the thread's current statement
    /// (it always is, except for instructions made up on the fly).
    fn decoded(&self, t: usize, ins: &Instruction) -> Option<&'p super::program::Decoded> {
        // The operands of one instruction ask in turn: remember the last answer.
        let (last, d) = self.last_decoded.get();
        if std::ptr::eq(last, ins) {
            return d;
        }
        let d = self.lookup_decoded(t, ins);
        self.last_decoded.set((ins, d));
        d
    }

    fn lookup_decoded(&self, t: usize, ins: &Instruction) -> Option<&'p super::program::Decoded> {
        let p: &'p Bound<'p, 'm> = self.p;
        let f = self.threads[t].frames.last()?;
        let layout = &p.funcs[f.func];
        match layout.f.body.as_ref()?.get(f.pc) {
            Some(Stmt::Instr(i)) if std::ptr::eq(&**i, ins) => layout.decoded[f.pc].as_ref(),
            _ => None,
        }
    }

    /// The type operand `k` of `ins` expects.
    fn operand_type(&self, t: usize, ins: &Instruction, k: usize) -> Option<ScalarType> {
        match self.decoded(t, ins) {
            Some(d) => d.operand_types.get(k).copied().flatten(),
            None => ins.operand_type(k),
        }
    }

    /// Reads a source operand (for the collectives).
    pub fn read_operand(&self, t: usize, ins: &Instruction, k: usize, op: &Operand, out: &mut SmallVec<[Val; 6]>) -> Result<(), RunError> {
        self.read(t, ins, k, op, out)
    }

    /// Writes a collective's results.
    pub fn write_collective(&mut self, t: usize, ins: &Instruction, vals: &[Val]) -> Result<(), RunError> {
        self.write_results(t, ins, vals)
    }

    /// Values of a source operand (a vector gives one per element).
    pub(super) fn read(&self, t: usize, ins: &Instruction, k: usize, op: &Operand, out: &mut SmallVec<[Val; 6]>) -> Result<(), RunError> {
        let ty = self.operand_type(t, ins, k);
        match op {
            Operand::Reg(r) => {
                let (rty, vector) = self.reg_width(t, r.reg);
                let lanes = match (r.sel.and_then(|s| s.lane()), vector) {
                    (Some(l), Some(_)) => l..l + 1,
                    (_, Some(n)) => 0..n,
                    _ => 0..1,
                };
                for l in lanes {
                    let mut v = self.reg(t, r.reg, l);
                    match r.prefix {
                        Prefix::Not => v.bits = (v.bits & 1) ^ 1,
                        Prefix::Neg => v.bits = trunc(v.bits.wrapping_neg(), rty.bits()),
                        Prefix::None => {}
                    }
                    if let Some(ty) = ty {
                        if ty != ScalarType::Pred && ty.bits() < rty.bits() {
                            v.bits = trunc(v.bits, ty.bits());
                        }
                    }
                    out.push(v);
                }
            }
            Operand::RegOffset(r, off) => {
                let v = self.reg(t, *r, 0);
                let (rty, _) = self.reg_width(t, *r);
                out.push(Val { bits: trunc(v.bits.wrapping_add(*off as i128 as u128), rty.bits()), quality: v.quality });
            }
            Operand::Imm(i) => out.push(Val::exact(imm_bits(i, ty.unwrap_or(ScalarType::B64)))),
            Operand::SReg(s, sel) => {
                let mut v = self.special(t, *s, *sel);
                if let Some(ty) = ty {
                    v = trunc(v, ty.bits());
                }
                // Clocks, timers, %smid, %warpid, counters: the hardware's
                // value is not determined by the program.
                let quality = if s.is_volatile() { Quality::Unspecified } else { Quality::Exact };
                out.push(Val { bits: v, quality });
            }
            Operand::Sym(s) => {
                let a = self.symbol_value(t, &s.name).ok_or_else(|| self.unsupported(t, &format!("address of `{}`", s.name)))?;
                out.push(Val::exact(a.wrapping_add(s.offset as u64) as u128));
            }
            Operand::Vector(v) => {
                for o in v.iter() {
                    self.read(t, ins, k, o, out)?;
                }
            }
            Operand::Sink => out.push(Val::exact(0)),
            _ => return Err(self.unsupported(t, &format!("`{}` with this operand", ins.opcode.name()))),
        }
        Ok(())
    }

    /// The value a name has as an operand: a variable's address in its
    /// state space, or a function's address.
    fn symbol_value(&self, t: usize, name: &str) -> Option<u64> {
        let f = self.threads[t].frames.last().unwrap();
        let loc = self.p.funcs[f.func].lookup(name, f.pc).or_else(|| self.p.globals.get(name).copied())?;
        Some(match loc {
            VarLoc::Global(a) | VarLoc::Func(a) => a,
            VarLoc::Const(o) | VarLoc::Shared(o) | VarLoc::Param(o) => o,
            VarLoc::Local(o) => f.local_base as u64 + o,
            VarLoc::ModuleLocal(o) => o,
            VarLoc::Reg(_) => return None,
        })
    }

    pub(super) fn undefined(&self, t: usize, message: &str) -> RunError {
        RunError::Undefined { message: message.to_string(), thread: self.thread_name(t), at: self.here(t) }
    }

    pub(super) fn unsupported(&self, t: usize, what: &str) -> RunError {
        RunError::Unsupported { what: what.to_string(), at: self.here(t) }
    }

    pub(super) fn fault(&self, t: usize, f: Fault) -> RunError {
        RunError::Fault { message: f.message, thread: self.thread_name(t), at: self.here(t) }
    }

    /// Writes results to the written operands, in order.
    pub(super) fn write_results(&mut self, t: usize, ins: &Instruction, vals: &[Val]) -> Result<(), RunError> {
        let mut it = vals.iter();
        for (k, (op, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
            if !spec.write {
                continue;
            }
            let ty = self.operand_type(t, ins, k);
            self.write_operand(t, op, ty, &mut it)?;
        }
        Ok(())
    }

    pub(super) fn write_operand(&mut self, t: usize, op: &Operand, ty: Option<ScalarType>, it: &mut std::slice::Iter<Val>) -> Result<(), RunError> {
        match op {
            Operand::Reg(r) => {
                let (_, vector) = self.reg_width(t, r.reg);
                let lanes = match (r.sel.and_then(|s| s.lane()), vector) {
                    (Some(l), Some(_)) => l..l + 1,
                    (_, Some(n)) => 0..n,
                    _ => 0..1,
                };
                for l in lanes {
                    if let Some(v) = it.next() {
                        self.set_reg(t, r.reg, l, *v, ty);
                    }
                }
            }
            Operand::Vector(v) => {
                for o in v.iter() {
                    self.write_operand(t, o, ty, it)?;
                }
            }
            Operand::Pair(first, q) => {
                self.write_operand(t, first, ty, it)?;
                if let Some(v) = it.next() {
                    if let PairPred::Reg(q) = q {
                        self.set_reg(t, *q, 0, *v, Some(ScalarType::Pred));
                    }
                }
            }
            Operand::Sink => {
                it.next();
            }
            Operand::List(v) => {
                for o in v.iter() {
                    self.write_operand(t, o, ty, it)?;
                }
            }
            _ => {
                it.next();
            }
        }
        Ok(())
    }

    // ----- memory ----------------------------------------------------------------------

    /// The space and address of an address operand.
    pub(super) fn address(&self, t: usize, ins: &Instruction, op: &Operand, space: StateSpace) -> Result<(Space, u64), RunError> {
        let (base, offset) = match op {
            Operand::Addr(a) => (a.base.clone(), a.offset),
            Operand::ArrayElem(e) => (AddrBase::Sym(e.name.clone()), 0),
            _ => return Err(self.unsupported(t, &format!("`{}` with this address", ins.opcode.name()))),
        };
        let f = self.threads[t].frames.last().unwrap();
        let (sp, a) = match base {
            AddrBase::Reg(r) => {
                let v = self.reg(t, r, 0);
                self.note_dependence(t, v.quality, "address");
                let v = v.bits as u64;
                match space_of(space) {
                    Some(s) => (s, v),
                    None => self.generic(t, v)?,
                }
            }
            AddrBase::Imm(v) => match space_of(space) {
                Some(s) => (s, v),
                None => self.generic(t, v)?,
            },
            AddrBase::Sym(name) => {
                let loc = self.p.funcs[f.func].lookup(&name, f.pc).or_else(|| self.p.globals.get(&name).copied());
                match loc {
                    Some(VarLoc::Global(a)) => (Space::Global, a),
                    Some(VarLoc::Const(o)) => (Space::Const, o),
                    Some(VarLoc::Shared(o)) => (Space::Shared, o),
                    Some(VarLoc::Local(o)) => (Space::Local, f.local_base as u64 + o),
                    Some(VarLoc::ModuleLocal(o)) => (Space::Local, o),
                    Some(VarLoc::Param(o)) => (Space::Param, o),
                    _ => return Err(self.unsupported(t, &format!("access to `{name}`"))),
                }
            }
        };
        Ok((sp, a.wrapping_add(offset as u64)))
    }

    /// Decodes a generic address.
    pub(super) fn generic(&self, t: usize, a: u64) -> Result<(Space, u64), RunError> {
        match Space::of_generic(a) {
            Some(Space::Global) => Ok((Space::Global, a)),
            Some(s) => Ok((s, a - s.generic_base())),
            None => Err(RunError::Fault { message: format!("generic address 0x{a:x} is in no state space"), thread: self.thread_name(t), at: self.here(t) }),
        }
    }

    /// Reads bytes; gives the worst quality among them.
    pub(super) fn mem_read(&self, t: usize, global: &Global, sp: Space, a: u64, out: &mut [u8]) -> Result<Quality, RunError> {
        if self.asyncs.watching() {
            self.check_async_access(t, sp, a, out.len(), false)?;
        }
        let r = match sp {
            Space::Global => global.read(a, out),
            Space::Const => self.p.const_mem.read(a, out),
            Space::Shared => self.shared.read(a, out),
            Space::Local => self.threads[t].local.read(a, out),
            Space::Param => self.threads[t].frames.last().unwrap().params.read(a, out),
        };
        r.map_err(|f| self.fault(t, f))
    }

    /// A write of `len` shared bytes at `a` (by `what`: an access, an
    /// asynchronous copy) while a `wgmma.mma_async` in flight reads some of
    /// them is undefined.
    pub(super) fn check_wgmma_reads(&self, t: usize, a: u64, len: usize, what: &str) -> Result<(), RunError> {
        if self.wgmma.reads_shared() {
            if let Some(m) = self.wgmma.shared_write_conflict(a, len, |f, pc| self.p.position(f, pc)) {
                return Err(self.undefined(t, &format!("{what} {m}")));
            }
        }
        Ok(())
    }

    pub(super) fn mem_write(&mut self, t: usize, global: &mut Global, sp: Space, a: u64, data: &[u8], q: Quality) -> Result<(), RunError> {
        if self.asyncs.watching() {
            self.check_async_access(t, sp, a, data.len(), true)?;
        }
        if sp == Space::Shared {
            self.check_wgmma_reads(t, a, data.len(), "this access")?;
        }
        let r = match sp {
            Space::Global => global.write(a, data, q),
            Space::Const => Err(Fault { message: "write to constant memory".into() }),
            Space::Shared => self.shared.write(a, data, q),
            Space::Local => self.threads[t].local.write(a, data, q),
            Space::Param => self.threads[t].frames.last_mut().unwrap().params.write(a, data, q),
        };
        r.map_err(|f| self.fault(t, f))
    }

    // ----- instructions ------------------------------------------------------------------

    fn step(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let op = ins.opcode;
        let flags = ins.form.flags();
        if op == Opcode::BRA {
            return self.branch(t, ins);
        }
        if op == Opcode::BRX_IDX {
            return self.branch_indexed(t, ins);
        }
        if op == Opcode::RET {
            return self.do_return(t);
        }
        if op == Opcode::EXIT {
            return Ok(Flow::Exit);
        }
        if op == Opcode::TRAP {
            return Err(RunError::Trap { thread: self.thread_name(t), at: self.here(t) });
        }
        if op == Opcode::CALL {
            return self.call(t, ins, global);
        }
        if op == Opcode::LD || op == Opcode::LDU {
            return self.load(t, ins, global);
        }
        if op == Opcode::ST {
            return self.store(t, ins, global);
        }
        if op == Opcode::ATOM || op == Opcode::RED {
            return self.atomic(t, ins, global);
        }
        if op == Opcode::BAR || op == Opcode::BARRIER {
            return self.barrier(t, ins);
        }
        if op == Opcode::MEMBAR || op == Opcode::FENCE || op == Opcode::NANOSLEEP || op == Opcode::PREFETCH || op == Opcode::PREFETCHU || op == Opcode::PMEVENT || op == Opcode::BRKPT {
            return Ok(Flow::Next);
        }
        // Hints and grid dependences with no effect on what a launch
        // computes: `applypriority` (an L2 eviction priority), `griddepcontrol`
        // (a launch has no prerequisite grids: `.wait` has nothing to wait
        // for; `.launch_dependents` starts none), `setmaxnreg` (physical
        // registers; PTX registers keep their values).
        if op == Opcode::APPLYPRIORITY || op == Opcode::GRIDDEPCONTROL {
            return Ok(Flow::Next);
        }
        if op == Opcode::SETMAXNREG {
            // §9.7.19.5: the count is 24 to 256, a multiple of 8.
            return match ins.operands.first() {
                Some(Operand::Imm(crate::ir::Imm::Int(n))) if (24..=256).contains(&n.value) && n.value % 8 == 0 => Ok(Flow::Next),
                _ => Err(self.undefined(t, "setmaxnreg needs a register count from 24 to 256 that is a multiple of 8")),
            };
        }
        if op == Opcode::CVTA {
            return self.cvta(t, ins);
        }
        if op == Opcode::ISSPACEP {
            return self.isspacep(t, ins);
        }
        if op == Opcode::ALLOCA || op == Opcode::STACKSAVE || op == Opcode::STACKRESTORE {
            return self.stack(t, ins);
        }
        if super::texture::handles(op) {
            return super::texture::execute(self, t, ins, global);
        }
        if super::matrix::handles(op) {
            return super::matrix::arrive(self, t, ins);
        }
        if super::warp::is_collective(op) {
            return super::warp::arrive(self, t, ins);
        }
        if op == Opcode::MOV && (ins.operands.iter().any(|o| matches!(o, Operand::Sym(_) | Operand::SReg(..))) || matches!(ins.operands.get(1), Some(Operand::Imm(_)))) {
            // Addresses, special registers and immediates: no evaluation needed.
            let mut v = SmallVec::new();
            self.read(t, ins, 1, &ins.operands[1], &mut v)?;
            self.write_results(t, ins, &v)?;
            return Ok(Flow::Next);
        }
        if !flags.is_pure() || ins.form.operands().iter().any(|o| o.mem.is_some()) || !eval::handles(op) {
            if let Some(flow) = super::async_copy::step(self, t, ins, global)? {
                return Ok(flow);
            }
            return Err(self.unsupported(t, &instruction_head(ins)));
        }
        // A pure instruction.
        let mut srcs: SmallVec<[Val; 6]> = SmallVec::new();
        for (k, (o, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
            if spec.read {
                self.read(t, ins, k, o, &mut srcs)?;
            }
        }
        let bits: SmallVec<[u128; 6]> = srcs.iter().map(|v| v.bits).collect();
        let input_quality = srcs.iter().fold(Quality::Exact, |a, v| worst(a, v.quality));
        let effective = match self.decoded(t, ins) {
            Some(d) => std::borrow::Cow::Borrowed(d.effective.as_deref().unwrap_or(ins)),
            None => eval::effective(ins, &self.p.dialect),
        };
        let r = match eval::eval(&effective, &bits, self.threads[t].carry) {
            Ok(r) => r,
            Err(eval::EvalError::Unsupported(why)) => return Err(self.unsupported(t, &format!("{} ({why})", instruction_head(ins)))),
            Err(e) => return Err(self.unsupported(t, &format!("{} ({e})", instruction_head(ins)))),
        };
        if let Some(c) = r.carry_out {
            self.threads[t].carry = c;
        }
        let vals: SmallVec<[Val; 4]> = r
            .dests
            .iter()
            .map(|v| {
                let q = match (v.quality, input_quality) {
                    (q, Quality::Exact) => q,
                    (Quality::AnyNan, Quality::AnyNan) => Quality::AnyNan,
                    (q, Quality::Approx { .. }) if q != Quality::Unspecified => worst(q, input_quality),
                    _ => Quality::Unspecified,
                };
                Val { bits: v.bits, quality: q }
            })
            .collect();
        self.write_results(t, ins, &vals)?;
        Ok(Flow::Next)
    }

    fn jump(&mut self, t: usize, l: crate::ir::LabelId) -> Result<Flow, RunError> {
        let f = self.threads[t].frames.last_mut().unwrap();
        match self.p.funcs[f.func].label_stmt[l.0 as usize] {
            Some(s) => {
                f.pc = s;
                Ok(Flow::Jumped)
            }
            None => Err(self.unsupported(t, "branch to a label outside the function")),
        }
    }

    fn branch(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        match ins.operands.first() {
            Some(Operand::Label(l)) => self.jump(t, *l),
            _ => Err(self.unsupported(t, "bra to a non-label")),
        }
    }

    fn branch_indexed(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        let mut v = SmallVec::new();
        self.read(t, ins, 0, &ins.operands[0], &mut v)?;
        self.note_dependence(t, v[0].quality, "branch index");
        let idx = v[0].bits as usize;
        let Some(Operand::Label(table)) = ins.operands.get(1) else { return Err(self.unsupported(t, "brx.idx without a table")) };
        let f = self.threads[t].frames.last().unwrap();
        let targets = self.p.funcs[f.func].tables.get(table).cloned().unwrap_or_default();
        match targets.get(idx) {
            Some(l) => self.jump(t, *l),
            None => Err(RunError::Fault { message: format!("brx.idx index {idx} is outside its table of {} targets", targets.len()), thread: self.thread_name(t), at: self.here(t) }),
        }
    }

    fn call(&mut self, t: usize, ins: &Instruction, global: &Global) -> Result<Flow, RunError> {
        let (mut ret, mut target, mut args) = (None, None, None);
        for (k, o) in ins.operands.iter().enumerate() {
            match o {
                Operand::List(l) if target.is_none() => ret = Some((k, l)),
                Operand::List(l) => args = Some((k, l)),
                _ if target.is_none() => target = Some(o),
                _ => {}
            }
        }
        let callee = match target {
            Some(Operand::Sym(s)) => self.p.func_index.get(&*s.name).copied(),
            Some(Operand::Reg(r)) => {
                let a = self.reg(t, r.reg, 0).bits as u64;
                let k = a.wrapping_sub(FUNC_BASE) as usize;
                self.p.module.items.iter().filter(|i| matches!(i, crate::ir::Item::Func(_))).nth(k).and_then(|i| match i {
                    crate::ir::Item::Func(f) => self.p.func_index.get(&*f.name).copied(),
                    _ => None,
                })
            }
            _ => None,
        };
        let Some(callee) = callee else {
            if let Some(Operand::Sym(s)) = target {
                let name = &s.name;
                if super::builtins::is_builtin(name) {
                    return self.call_builtin(t, ins, name, ret.map(|(_, l)| &l[..]), args.map(|(_, l)| &l[..]), global);
                }
            }
            let what = match target {
                Some(Operand::Sym(s)) => format!("call {} (an external function: no body in the module)", s.name),
                _ => "call (through a pointer to no function of the module)".to_string(),
            };
            return Err(self.unsupported(t, &what));
        };
        let cf = &self.p.funcs[callee];
        let mut frame = Frame { func: callee, pc: 0, regs: vec![Val::unspecified(); cf.nslots], params: Flat::new("param", cf.param_size), local_base: 0, ret_to: ret.map(|(k, _)| (k, 0)) };
        // Arguments: bytes of the caller's `.param` variables (or register values).
        let caller = self.threads[t].frames.last().unwrap();
        if let Some((_, list)) = args {
            for (a, loc) in list.iter().zip(&cf.params) {
                let (bytes, quality): (Vec<u8>, Vec<Quality>) = match a {
                    Operand::Sym(s) => match self.p.funcs[caller.func].lookup(&s.name, caller.pc) {
                        Some(VarLoc::Param(o)) => caller.params.read_bytes(o, cf.param_size_at(*loc)).map_err(|f| self.fault(t, f))?,
                        _ => return Err(self.unsupported(t, "call argument that is not a .param variable")),
                    },
                    other => {
                        let mut v = SmallVec::new();
                        self.read(t, ins, 0, other, &mut v)?;
                        let x = v.first().copied().unwrap_or(Val::unspecified());
                        (to_bytes(x.bits, 16), vec![x.quality; 16])
                    }
                };
                match loc {
                    VarLoc::Param(o) => {
                        let n = cf.param_size_at(*loc).min(bytes.len());
                        let _ = frame.params.write_bytes(*o, &bytes[..n], &quality[..n]);
                    }
                    VarLoc::Reg(r) => {
                        let base = cf.reg_base[*r as usize] as usize;
                        let q = quality.iter().fold(Quality::Exact, |a, q| worst(a, *q));
                        frame.regs[base] = Val { bits: from_bytes(&bytes), quality: q };
                    }
                    _ => {}
                }
            }
        }
        let th = &mut self.threads[t];
        frame.local_base = th.local.grow(cf.local_size, 16);
        th.frames.push(frame);
        Ok(Flow::Jumped)
    }

    fn do_return(&mut self, t: usize) -> Result<Flow, RunError> {
        let th = &mut self.threads[t];
        let done = th.frames.pop().unwrap();
        let Some(caller) = th.frames.last() else {
            return Ok(Flow::Exit);
        };
        let cf = &self.p.funcs[done.func];
        let caller_func = caller.func;
        let caller_pc = caller.pc;
        // Results: the callee's return parameters into the caller's `(ret)` list.
        if let Some((k, _)) = done.ret_to {
            let body = self.p.funcs[caller_func].f.body.as_ref().unwrap();
            if let Stmt::Instr(call) = &body[caller_pc] {
                if let Some(Operand::List(list)) = call.operands.get(k) {
                    for (dst, loc) in list.iter().zip(&cf.ret_params) {
                        let (bytes, quality) = match loc {
                            VarLoc::Param(o) => match done.params.read_bytes(*o, cf.param_size_at(*loc)) {
                                Ok(b) => b,
                                Err(_) => continue,
                            },
                            VarLoc::Reg(r) => {
                                let v = done.regs[cf.reg_base[*r as usize] as usize];
                                (to_bytes(v.bits, 16), vec![v.quality; 16])
                            }
                            _ => continue,
                        };
                        match dst {
                            Operand::Sym(s) => {
                                if let Some(VarLoc::Param(o)) = self.p.funcs[caller_func].lookup(&s.name, caller_pc) {
                                    let _ = self.threads[t].frames.last_mut().unwrap().params.write_bytes(o, &bytes, &quality);
                                }
                            }
                            Operand::Reg(r) => {
                                let q = quality.iter().fold(Quality::Exact, |a, q| worst(a, *q));
                                self.set_reg(t, r.reg, 0, Val { bits: from_bytes(&bytes), quality: q }, None);
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        // Free the callee's locals.
        let th = &mut self.threads[t];
        th.local.truncate(done.local_base);
        th.frames.last_mut().unwrap().pc += 1;
        Ok(Flow::Jumped)
    }

    fn element_type(ins: &Instruction) -> ScalarType {
        // The data type: the last type modifier (`ld.global.v4.f32`, `atom.add.u32`).
        ins.types().last().copied().unwrap_or(ScalarType::B32)
    }

    /// A vector access must be aligned to its whole size (the manual:
    /// vector loads and stores of `.v2`/`.v4` need an address that is a
    /// multiple of the vector's size); a misaligned one is undefined, and
    /// is reported (the check that `vectorize`'s alignment proofs hold).
    fn check_vector_alignment(&self, t: usize, addr: u64, bytes: usize) -> Result<(), RunError> {
        if bytes > 1 && bytes.is_power_of_two() && addr % bytes as u64 != 0 {
            return Err(self.undefined(t, &format!("a {bytes}-byte vector access at address 0x{addr:x}, which is not a multiple of {bytes}")));
        }
        Ok(())
    }

    fn load(&mut self, t: usize, ins: &Instruction, global: &Global) -> Result<Flow, RunError> {
        let ty = Self::element_type(ins);
        let n = ins.vector().unwrap_or(1) as usize;
        let size = type_bytes(ty);
        let (sp, a) = self.address(t, ins, &ins.operands[1], ins.space())?;
        if ins.vector().is_some() {
            self.check_vector_alignment(t, a, n * size)?;
        }
        let mut vals: SmallVec<[Val; 4]> = SmallVec::new();
        let mut buf = vec![0u8; size];
        for k in 0..n {
            let quality = self.mem_read(t, global, sp, a.wrapping_add((k * size) as u64), &mut buf)?;
            vals.push(Val { bits: from_bytes(&buf), quality });
        }
        let mut it = vals.iter();
        let d = ins.operands[0].clone();
        self.write_operand(t, &d, Some(ty), &mut it)?;
        Ok(Flow::Next)
    }

    fn store(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let ty = Self::element_type(ins);
        let size = type_bytes(ty);
        let (sp, a) = self.address(t, ins, &ins.operands[0], ins.space())?;
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        self.read(t, ins, 1, &ins.operands[1], &mut v)?;
        if ins.vector().is_some() {
            self.check_vector_alignment(t, a, v.len() * size)?;
        }
        for (k, x) in v.iter().enumerate() {
            self.mem_write(t, global, sp, a.wrapping_add((k * size) as u64), &to_bytes(x.bits, size), x.quality)?;
        }
        Ok(Flow::Next)
    }

    /// `atom` and `red` (PTX ISA 8.7 §9.7.13.5-6): scalar, packed and vector
    /// forms; a vector form is atomic element by element.
    fn atomic(&mut self, t: usize, ins: &Instruction, global: &mut Global) -> Result<Flow, RunError> {
        let ty = Self::element_type(ins);
        let size = type_bytes(ty);
        let n = ins.vector().unwrap_or(1) as usize;
        let is_atom = ins.opcode == Opcode::ATOM;
        let addr_k = if is_atom { 1 } else { 0 };
        let (sp, a) = self.address(t, ins, &ins.operands[addr_k], ins.space())?;
        let mut srcs: SmallVec<[Val; 6]> = SmallVec::new();
        for k in addr_k + 1..ins.operands.len() {
            if ins.form.operands()[k].name.starts_with("cache") {
                continue;
            }
            self.read(t, ins, k, &ins.operands[k], &mut srcs)?;
        }
        let mut olds: SmallVec<[Val; 8]> = SmallVec::new();
        let mut buf = vec![0u8; size];
        for i in 0..n {
            let at = a.wrapping_add((i * size) as u64);
            let old_quality = self.mem_read(t, global, sp, at, &mut buf)?;
            let old = from_bytes(&buf);
            // A vector form takes one `b` per element; `cas` takes `b` and `c`.
            let operands: SmallVec<[Val; 2]> = if n > 1 { srcs.get(i).copied().into_iter().collect() } else { srcs.iter().copied().take(2).collect() };
            let new = self.atomic_element(t, ins, ty, sp, old, old_quality, &operands)?;
            self.mem_write(t, global, sp, at, &to_bytes(new.bits, size), new.quality)?;
            olds.push(Val { bits: old, quality: old_quality });
        }
        if is_atom {
            let d = ins.operands[0].clone();
            let mut it = olds.iter();
            self.write_operand(t, &d, Some(ty), &mut it)?;
        }
        Ok(Flow::Next)
    }

    /// The value an atomic operation stores, from the value `old` in memory
    /// and the operands (`b`, and `c` for `cas`).
    #[allow(clippy::too_many_arguments)]
    fn atomic_element(&self, t: usize, ins: &Instruction, ty: ScalarType, sp: Space, old: u128, old_quality: Quality, operands: &[Val]) -> Result<Val, RunError> {
        let b = operands.first().map_or(0, |v| v.bits);
        let c = operands.get(1).map_or(0, |v| v.bits);
        let bits = ty.bits();
        let inputs = operands.iter().fold(old_quality, |q, v| worst(q, v.quality));
        if ty.class() == TypeClass::Float {
            let op = if ins.has(Mod::ADD) {
                eval::AtomicFloatOp::Add
            } else if ins.has(Mod::MIN) {
                eval::AtomicFloatOp::Min
            } else if ins.has(Mod::MAX) {
                eval::AtomicFloatOp::Max
            } else {
                return Err(self.unsupported(t, &instruction_head(ins)));
            };
            // "atom.add.f32 on global memory flushes subnormal inputs and
            // results to sign-preserving zero; on shared memory [it] supports
            // subnormal inputs and results."
            let flush = ty == ScalarType::F32 && sp == Space::Global;
            let f = |x: u128| if flush && f32::from_bits(x as u32).is_subnormal() { x & 0x8000_0000 } else { x };
            let Some(r) = eval::atomic_float_op(op, ty, f(old), f(b)) else {
                return Err(self.unsupported(t, &instruction_head(ins)));
            };
            let quality = if inputs == Quality::Exact { r.quality } else { worst(inputs, r.quality) };
            return Ok(Val { bits: f(r.bits), quality });
        }
        let signed = ty.class() == TypeClass::Signed;
        let b = trunc(b, bits);
        let new = if ins.has(Mod::ADD) {
            trunc(old.wrapping_add(b), bits)
        } else if ins.has(Mod::EXCH) {
            b
        } else if ins.has(Mod::CAS) {
            if old == b {
                trunc(c, bits)
            } else {
                old
            }
        } else if ins.has(Mod::AND) {
            old & b
        } else if ins.has(Mod::OR) {
            old | b
        } else if ins.has(Mod::XOR) {
            old ^ b
        } else if ins.has(Mod::INC) {
            if old >= b { 0 } else { old + 1 }
        } else if ins.has(Mod::DEC) {
            if old == 0 || old > b { b } else { old - 1 }
        } else if ins.has(Mod::MIN) || ins.has(Mod::MAX) {
            let less = if signed { eval::sext(b, bits) < eval::sext(old, bits) } else { b < old };
            let take_b = if ins.has(Mod::MIN) { less } else { !less && b != old };
            if take_b { b } else { old }
        } else {
            return Err(self.unsupported(t, &instruction_head(ins)));
        };
        Ok(Val { bits: new, quality: inputs })
    }

    fn barrier(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        let red = ins.has(Mod::RED);
        // Operands: [d,] a{, b}{, c}: read the barrier number, count, predicate.
        let start = if red { 1 } else { 0 };
        for k in start..ins.operands.len() {
            self.read(t, ins, k, &ins.operands[k], &mut v)?;
        }
        // Which barrier and how many threads it waits for decide the schedule.
        for x in v.iter().take(if red { v.len().saturating_sub(1) } else { v.len() }) {
            self.note_dependence(t, x.quality, "barrier operand");
        }
        let id = v.first().map_or(0, |x| x.bits as u32);
        let (count, pred) = if red {
            match v.len() {
                3 => (Some(v[1].bits as u32), Some(v[2])),
                2 => (None, Some(v[1])),
                _ => (None, None),
            }
        } else {
            (v.get(1).map(|x| x.bits as u32), None)
        };
        if ins.has(Mod::ARRIVE) {
            return Ok(Flow::Next);
        }
        self.threads[t].wait = Wait::at_barrier(id, count, pred);
        Ok(Flow::Block)
    }

    /// Writes what a completed barrier or collective gives this thread.
    fn finish_collective(&mut self, t: usize, ins: &Instruction, results: SmallVec<[Val; 3]>) -> Result<(), RunError> {
        if ins.opcode == Opcode::BAR || ins.opcode == Opcode::BARRIER {
            if ins.has(Mod::RED) {
                let v = if ins.has(Mod::POPC) { results[0] } else if ins.has(Mod::AND) { results[1] } else { results[2] };
                let d = ins.operands[0].clone();
                let vals = [v];
                let mut it = vals.iter();
                let ty = if ins.has(Mod::POPC) { ScalarType::U32 } else { ScalarType::Pred };
                self.write_operand(t, &d, Some(ty), &mut it)?;
            }
            return Ok(());
        }
        self.write_results(t, ins, &results)
    }

    fn cvta(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        self.read(t, ins, 1, &ins.operands[1], &mut v)?;
        let a = v[0].bits as u64;
        let space = space_of(ins.space());
        let to = ins.has(Mod::TO);
        let r = match space {
            Some(Space::Global) | None => a,
            Some(s) if to => a.wrapping_sub(s.generic_base()),
            Some(s) => a.wrapping_add(s.generic_base()),
        };
        let out = [Val { bits: r as u128, quality: v[0].quality }];
        let mut it = out.iter();
        let d = ins.operands[0].clone();
        self.write_operand(t, &d, None, &mut it)?;
        Ok(Flow::Next)
    }

    fn isspacep(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        let mut v: SmallVec<[Val; 6]> = SmallVec::new();
        self.read(t, ins, 1, &ins.operands[1], &mut v)?;
        let a = v[0].bits as u64;
        let want = space_of(ins.space());
        let is = match (Space::of_generic(a), want) {
            (Some(s), Some(w)) => s == w,
            _ => false,
        };
        // Of an address that is not known, whether it is in the space is not known either.
        let quality = if v[0].quality == Quality::Exact { Quality::Exact } else { Quality::Unspecified };
        let out = [Val { bits: is as u128, quality }];
        let mut it = out.iter();
        let d = ins.operands[0].clone();
        self.write_operand(t, &d, Some(ScalarType::Pred), &mut it)?;
        Ok(Flow::Next)
    }

    fn stack(&mut self, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
        let op = ins.opcode;
        if op == Opcode::STACKSAVE {
            let sp = self.threads[t].local.bytes.len() as u128;
            let out = [Val::exact(sp)];
            let mut it = out.iter();
            let d = ins.operands[0].clone();
            self.write_operand(t, &d, None, &mut it)?;
        } else if op == Opcode::STACKRESTORE {
            let mut v: SmallVec<[Val; 6]> = SmallVec::new();
            self.read(t, ins, 0, &ins.operands[0], &mut v)?;
            let sp = (v[0].bits as usize).min(self.threads[t].local.bytes.len());
            let keep = sp.max(self.p.funcs[self.threads[t].frames.last().unwrap().func].local_size);
            self.threads[t].local.truncate(keep);
        } else {
            let mut v: SmallVec<[Val; 6]> = SmallVec::new();
            for k in 1..ins.operands.len() {
                self.read(t, ins, k, &ins.operands[k], &mut v)?;
            }
            let size = v.first().map_or(0, |x| x.bits as usize);
            let align = v.get(1).map_or(8, |x| x.bits as usize).max(1);
            for x in &v {
                self.note_dependence(t, x.quality, "alloca size");
            }
            if size > 1 << 24 {
                return Err(self.fault(t, Fault { message: format!("alloca of {size} bytes") }));
            }
            let off = self.threads[t].local.grow(size, align);
            let out = [Val::exact(off as u128)];
            let mut it = out.iter();
            let d = ins.operands[0].clone();
            self.write_operand(t, &d, None, &mut it)?;
        }
        Ok(Flow::Next)
    }
}

/// What an executed instruction does to control flow.
pub enum Flow {
    Next,
    Jumped,
    Block,
    Exit,
}

/// The memory space an instruction's state space names (None: generic).
pub fn space_of(s: StateSpace) -> Option<Space> {
    match s.base() {
        StateSpace::Global => Some(Space::Global),
        StateSpace::Const => Some(Space::Const),
        StateSpace::Shared => Some(Space::Shared),
        StateSpace::Local => Some(Space::Local),
        StateSpace::Param => Some(Space::Param),
        _ => None,
    }
}

/// `ld.global.v4.f32` for messages.
pub fn instruction_head(ins: &Instruction) -> String {
    let mut s = ins.opcode.name().to_string();
    for m in ins.mods.iter() {
        s.push_str(m.text());
    }
    s
}


//! Warp-collective instructions (`shfl`, `vote`, `match`, `redux`, `elect`,
//! `activemask`, `bar.warp.sync`): a thread arriving waits until every
//! member of its mask has arrived at the same instruction, then all get
//! their results.

use super::exec::{instruction_head, Cta, Flow, Wait};
use super::RunError;
use crate::eval::{self, Quality, Val};
use crate::ir::Instruction;
use crate::isa::{Mod, Opcode, ScalarType, TypeClass};
use smallvec::SmallVec;

pub fn is_collective(op: Opcode) -> bool {
    [Opcode::SHFL, Opcode::SHFL_SYNC, Opcode::VOTE, Opcode::VOTE_SYNC, Opcode::MATCH, Opcode::REDUX_SYNC, Opcode::ELECT_SYNC, Opcode::ACTIVEMASK, Opcode::BAR_WARP_SYNC].contains(&op)
}

/// Lanes of thread `t`'s warp that have not exited.
fn alive_lanes(cta: &Cta, t: usize) -> u32 {
    let warp = cta.threads[t].linear / 32;
    cta.threads.iter().filter(|th| th.linear / 32 == warp && th.wait != Wait::Exited).fold(0u32, |m, th| m | 1 << (th.linear % 32))
}

/// A thread arrives at a collective: its sources are read now, then it waits.
pub fn arrive(cta: &mut Cta, t: usize, ins: &Instruction) -> Result<Flow, RunError> {
    let op = ins.opcode;
    if op == Opcode::ACTIVEMASK {
        // The interpreter keeps a warp's live threads together: all of them.
        let m = alive_lanes(cta, t);
        let v = [Val::exact(m as u128)];
        cta.write_collective(t, ins, &v)?;
        return Ok(Flow::Next);
    }
    let mut srcs: SmallVec<[Val; 6]> = SmallVec::new();
    for (k, (o, spec)) in ins.operands.iter().zip(ins.form.operands()).enumerate() {
        if spec.read {
            cta.read_operand(t, ins, k, o, &mut srcs)?;
        }
    }
    // The member mask is the last source of the `.sync` forms; the legacy
    // forms take the whole warp.
    let legacy = op == Opcode::SHFL || op == Opcode::VOTE;
    let mask = if legacy { 0xffff_ffff } else { srcs.last().map_or(0xffff_ffff, |v| v.bits as u32) };
    if !legacy {
        // Which threads take part depends on the mask.
        cta.note_dependence(t, srcs.last().map_or(Quality::Exact, |v| v.quality), "member mask");
    }
    let lane = cta.threads[t].linear % 32;
    if mask >> lane & 1 == 0 {
        return Err(cta.undefined(t, &format!("lane {lane} executes `{}` with member mask {mask:#010x}, which does not include it", instruction_head(ins))));
    }
    let frame = cta.threads[t].frames.last().unwrap();
    let (func, pc) = (frame.func, frame.pc);
    cta.threads[t].wait = Wait::Warp { func, pc, mask, srcs: srcs.into_vec() };
    Ok(Flow::Block)
}

/// Completes every collective whose members have all arrived.
pub fn release_collectives(cta: &mut Cta) -> Result<bool, RunError> {
    let mut released = false;
    let n = cta.threads.len();
    for t in 0..n {
        let (func, pc, mask) = match &cta.threads[t].wait {
            Wait::Warp { func, pc, mask, .. } => (*func, *pc, *mask),
            _ => continue,
        };
        let body = cta.p.funcs[func].f.body.as_ref().unwrap();
        let crate::ir::Stmt::Instr(ins) = &body[pc] else { continue };
        if super::matrix::handles(ins.opcode) {
            continue; // released by `matrix::release`
        }
        let warp = cta.threads[t].linear / 32;
        let in_warp = |k: usize| cta.threads[k].linear / 32 == warp;
        let waits_here = |k: usize| matches!(&cta.threads[k].wait, Wait::Warp { func: f, pc: p, .. } if *f == func && *p == pc);
        let group: Vec<usize> = if ins.opcode == Opcode::SHFL || ins.opcode == Opcode::VOTE {
            // The legacy (non-`.sync`) forms act among the threads that execute
            // them together: once no thread of the warp can go on, those
            // waiting here.
            if (0..n).any(|k| in_warp(k) && cta.threads[k].wait == Wait::Running) {
                continue;
            }
            (0..n).filter(|&k| in_warp(k) && waits_here(k)).collect()
        } else {
            // Every thread of the mask still alive waits here?
            let members = mask & alive_lanes(cta, t);
            let group: Vec<usize> = (0..n).filter(|&k| in_warp(k) && members >> (cta.threads[k].linear % 32) & 1 == 1).collect();
            if !group.iter().all(|&k| waits_here(k)) {
                continue;
            }
            group
        };
        if group.is_empty() {
            continue;
        }
        let ins = ins.clone();
        let members = group.iter().fold(0u32, |m, &k| m | 1 << (cta.threads[k].linear % 32));
        let srcs: Vec<(u32, Vec<Val>)> = group
            .iter()
            .map(|&k| match &cta.threads[k].wait {
                Wait::Warp { srcs, .. } => (cta.threads[k].linear % 32, srcs.clone()),
                _ => unreachable!(),
            })
            .collect();
        let results = compute(cta, t, &ins, members, &srcs)?;
        for (&k, r) in group.iter().zip(results) {
            cta.threads[k].wait = Wait::Running;
            cta.threads[k].resume = Some(r.into());
        }
        released = true;
    }
    Ok(released)
}

/// The results of a collective for each member, in `srcs` order.
fn compute(cta: &Cta, t: usize, ins: &Instruction, members: u32, srcs: &[(u32, Vec<Val>)]) -> Result<Vec<Vec<Val>>, RunError> {
    let op = ins.opcode;
    let lane_value = |lane: u32| srcs.iter().find(|(l, _)| *l == lane).map(|(_, v)| v.clone());
    let out = |vals: Vec<Val>| vals;
    let mut results = Vec::with_capacity(srcs.len());
    if op == Opcode::BAR_WARP_SYNC {
        return Ok(srcs.iter().map(|_| Vec::new()).collect());
    }
    if op == Opcode::SHFL || op == Opcode::SHFL_SYNC {
        let mode = [(Mod::UP, 0), (Mod::DOWN, 1), (Mod::BFLY, 2), (Mod::IDX, 3)].iter().find(|(m, _)| ins.has(*m)).map(|x| x.1).unwrap_or(3);
        for (lane, v) in srcs {
            let (b, c) = (v[1].bits as i64 & 31, v[2].bits as u32);
            let (cval, seg) = ((c & 31) as i64, ((c >> 8) & 31) as i64);
            let lane = *lane as i64;
            let max_lane = (lane & seg) | (cval & !seg);
            let min_lane = lane & seg;
            let (mut j, pval) = match mode {
                0 => (lane - b, lane - b >= max_lane),
                1 => (lane + b, lane + b <= max_lane),
                2 => (lane ^ b, (lane ^ b) <= max_lane),
                _ => {
                    let j = min_lane | (b & !seg);
                    (j, j <= max_lane)
                }
            };
            if !pval {
                j = lane;
            }
            let mut d = match (0..32).contains(&j).then(|| lane_value(j as u32)).flatten() {
                Some(src) => src[0],
                None => Val { bits: 0, quality: Quality::Unspecified },
            };
            // A lane offset or clamp that is not known picks an unknown source lane.
            let mut p = Val::exact(pval as u128);
            if v[1].quality != Quality::Exact || v[2].quality != Quality::Exact {
                d.quality = Quality::Unspecified;
                p.quality = Quality::Unspecified;
            }
            results.push(out(vec![d, p]));
        }
        return Ok(results);
    }
    // Whether every member's value is known: a comparison or reduction over
    // one unknown value is unknown for every member.
    let quality = if srcs.iter().all(|(_, v)| v[0].quality == Quality::Exact) { Quality::Exact } else { Quality::Unspecified };
    let known = |bits: u128| Val { bits, quality };
    if op == Opcode::VOTE || op == Opcode::VOTE_SYNC {
        let ballot = srcs.iter().filter(|(_, v)| v[0].bits & 1 == 1).fold(0u32, |m, (l, _)| m | 1 << l);
        let count = srcs.len();
        let trues = ballot.count_ones() as usize;
        for _ in srcs {
            let r = if ins.has(Mod::BALLOT) {
                ballot as u128
            } else if ins.has(Mod::ALL) {
                (trues == count) as u128
            } else if ins.has(Mod::ANY) {
                (trues > 0) as u128
            } else {
                (trues == 0 || trues == count) as u128
            };
            results.push(vec![known(r)]);
        }
        return Ok(results);
    }
    if op == Opcode::MATCH {
        for (_, v) in srcs {
            let same = srcs.iter().filter(|(_, w)| w[0].bits == v[0].bits).fold(0u32, |m, (l, _)| m | 1 << l);
            if ins.has(Mod::ALL) {
                let all = same == members;
                results.push(vec![known(if all { members as u128 } else { 0 }), known(all as u128)]);
            } else {
                results.push(vec![known(same as u128)]);
            }
        }
        return Ok(results);
    }
    if op == Opcode::ELECT_SYNC {
        let leader = members.trailing_zeros();
        for (lane, _) in srcs {
            results.push(vec![Val::exact(leader as u128), Val::exact((*lane == leader) as u128)]);
        }
        return Ok(results);
    }
    if op == Opcode::REDUX_SYNC {
        let ty = ins.ty().unwrap_or(ScalarType::B32);
        if ty.class() == TypeClass::Float {
            return Err(RunError::Unsupported { what: instruction_head(ins), at: cta.p.position(cta.threads[t].frames.last().unwrap().func, cta.threads[t].frames.last().unwrap().pc) });
        }
        let signed = ty.class() == TypeClass::Signed;
        let vals: Vec<u32> = srcs.iter().map(|(_, v)| v[0].bits as u32).collect();
        let r: u32 = if ins.has(Mod::ADD) {
            vals.iter().fold(0u32, |a, b| a.wrapping_add(*b))
        } else if ins.has(Mod::AND) {
            vals.iter().fold(u32::MAX, |a, b| a & b)
        } else if ins.has(Mod::OR) {
            vals.iter().fold(0, |a, b| a | b)
        } else if ins.has(Mod::XOR) {
            vals.iter().fold(0, |a, b| a ^ b)
        } else if ins.has(Mod::MIN) {
            if signed { vals.iter().map(|v| *v as i32).min().unwrap_or(0) as u32 } else { vals.iter().copied().min().unwrap_or(0) }
        } else if ins.has(Mod::MAX) {
            if signed { vals.iter().map(|v| *v as i32).max().unwrap_or(0) as u32 } else { vals.iter().copied().max().unwrap_or(0) }
        } else {
            return Err(RunError::Unsupported { what: instruction_head(ins), at: String::new() });
        };
        let _ = eval::bits_mask;
        return Ok(srcs.iter().map(|_| vec![known(r as u128)]).collect());
    }
    Err(RunError::Unsupported { what: instruction_head(ins), at: String::new() })
}

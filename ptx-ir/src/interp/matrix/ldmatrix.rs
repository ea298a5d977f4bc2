//! `ldmatrix`, `stmatrix` and `movmatrix` on 8x8 matrices of 16-bit
//! elements (PTX ISA 8.7 §9.7.14.5.15-17).
//!
//! `.x1`/`.x2`/`.x4` move one, two or four matrices; the rows of matrix `j`
//! start at the addresses lanes `8j .. 8j+7` give (row `r` at lane
//! `8j + r`'s address), 16 bytes each, naturally aligned, in shared memory
//! (a generic address outside it is undefined). Register `j` of every lane
//! holds that lane's fragment of matrix `j` (layout: `layout.rs`,
//! [`m8n8_b16_coord`]). The `.m16n16`/`.m8n16`/`.b8` forms (sm_100a and
//! newer) are not implemented.

use super::layout::{m8n8_b16_coord, m8n8_b16_holder};
use super::{space_of, Completion, Failure, LaneInputs, Memory};
use crate::eval::{Quality, Val};
use crate::interp::memory::Space;
use crate::ir::Instruction;
use crate::isa::Opcode;

#[derive(Clone, Copy, Debug)]
pub struct Form {
    pub num: u32,
    pub trans: bool,
}

impl Form {
    pub fn parse(ins: &Instruction) -> Result<Form, Option<String>> {
        let mut num = if ins.opcode == Opcode::MOVMATRIX { 1 } else { 0 };
        let mut trans = false;
        for t in super::mma::mod_texts(ins) {
            match t {
                ".sync" | ".aligned" | ".m8n8" | ".b16" => {}
                ".x1" => num = 1,
                ".x2" => num = 2,
                ".x4" => num = 4,
                ".trans" => trans = true,
                _ if t.starts_with(".shared") => {}
                other => return Err(Some(format!("`{other}` is not implemented"))),
            }
        }
        if num == 0 {
            return Err(None);
        }
        Ok(Form { num, trans })
    }
}

/// The shared-memory address of row `r` of matrix `j` (from lane `8j + r`).
fn row_address(inputs: &[LaneInputs], addr_op: usize, j: u32, r: u32) -> Result<u64, Failure> {
    let lane = (8 * j + r) as usize;
    let v = inputs[lane].ops[addr_op].first().ok_or_else(|| Failure::Unsupported("address".into()))?;
    let a = v.bits as u64;
    if space_of(a) != Some(Space::Shared) {
        return Err(Failure::Undefined { lane, message: format!("matrix row address 0x{a:x} of lane {lane} is not in shared memory") });
    }
    if a % 16 != 0 {
        return Err(Failure::Undefined { lane, message: format!("matrix row address 0x{a:x} of lane {lane} is not 16-byte aligned") });
    }
    Ok(a)
}

pub fn execute(ins: &Instruction, inputs: &[LaneInputs], mem: &dyn Memory) -> Result<Completion, Failure> {
    let form = Form::parse(ins).map_err(|w| Failure::Unsupported(w.unwrap_or_else(|| "form".into())))?;
    let want = form.num as usize;
    let regs_at = if ins.opcode == Opcode::STMATRIX { 1 } else { 0 };
    let given = match ins.operands.get(regs_at) {
        Some(crate::ir::Operand::Vector(v)) => v.len(),
        _ => 1,
    };
    if given != want {
        return Err(Failure::Unsupported(format!("{given} registers for {want} matrices")));
    }
    match ins.opcode {
        Opcode::LDMATRIX => {
            // Operands: r, [p]. Read the 8 rows of each matrix.
            let mut mats = Vec::with_capacity(want);
            for j in 0..form.num {
                let mut m = [[(0u16, Quality::Exact); 8]; 8];
                for r in 0..8 {
                    let a = row_address(inputs, 1, j, r)?;
                    for c in 0..8u32 {
                        let (b, q) = mem.read((8 * j + r) as usize, a + 2 * c as u64, 2)?;
                        m[r as usize][c as usize] = (u16::from_le_bytes([b[0], b[1]]), q);
                    }
                }
                mats.push(m);
            }
            let results = (0..32u32)
                .map(|l| {
                    mats.iter()
                        .map(|m| {
                            let mut v = Val::exact(0);
                            for h in 0..2 {
                                let (r, c) = m8n8_b16_coord(l, h, form.trans);
                                let (x, q) = m[r as usize][c as usize];
                                v.bits |= (x as u128) << (16 * h);
                                v.quality = if h == 0 { q } else { super::combine(v.quality, q) };
                            }
                            v
                        })
                        .collect()
                })
                .collect();
            Ok(Completion { results, writes: Vec::new() })
        }
        Opcode::STMATRIX => {
            // Operands: [p], r.
            let mut writes = Vec::new();
            for j in 0..form.num {
                for r in 0..8u32 {
                    let a = row_address(inputs, 0, j, r)?;
                    let mut bytes = Vec::with_capacity(16);
                    let mut quality = Vec::with_capacity(16);
                    for c in 0..8u32 {
                        // Element (r, c) of the stored matrix is element (c, r) of the fragments with .trans.
                        let (fr, fc) = if form.trans { (c, r) } else { (r, c) };
                        let (lane, h) = m8n8_b16_holder(fr, fc);
                        let reg = inputs[lane as usize].ops[1].get(j as usize).ok_or_else(|| Failure::Unsupported("fragment with too few registers".into()))?;
                        bytes.extend_from_slice(&((reg.bits >> (16 * h)) as u16).to_le_bytes());
                        quality.extend([reg.quality; 2]);
                    }
                    writes.push(((8 * j + r) as usize, a, bytes, quality));
                }
            }
            Ok(Completion { results: vec![Vec::new(); 32], writes })
        }
        _ => {
            // movmatrix d, a: d holds the transposed matrix's fragment.
            let results = (0..32u32)
                .map(|l| {
                    let mut v = Val::exact(0);
                    for h in 0..2 {
                        let (r, c) = m8n8_b16_coord(l, h, true);
                        let (src, sh) = m8n8_b16_holder(r, c);
                        let reg = inputs[src as usize].ops[1][0];
                        v.bits |= ((reg.bits >> (16 * sh)) & 0xffff) << (16 * h);
                        v.quality = if h == 0 { reg.quality } else { super::combine(v.quality, reg.quality) };
                    }
                    vec![v]
                })
                .collect();
            Ok(Completion { results, writes: Vec::new() })
        }
    }
}

//! Which elements a tile-mode tensor copy moves, and where (PTX ISA 8.7
//! §5.5.3): the bounding box starts at the instruction's coordinates and
//! takes ⌈box[k] / traversal stride[k]⌉ elements in dimension k, every
//! traversal-stride-th one (§5.5.3.2); an element outside the tensor
//! (a coordinate below 0 or not below the dimension) is out of bounds
//! (§5.5.3.3). In shared memory the box is dense, dimension 0 fastest
//! ("PTX tensor instructions treat the data in shared memory as linear",
//! §5.5), with the swizzle of §5.5.7 applied to the shared address.

use super::map::{Atomicity, Swizzle, TensorMap};

/// One element of the box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    /// Shared-memory offset (swizzled).
    pub shared: u64,
    /// Global address; `None` when out of bounds.
    pub global: Option<u64>,
}

/// The elements of one copy, and the byte ranges they touch on each side
/// (sorted, merged, half-open) for the race checks.
#[derive(Clone, Debug)]
pub struct Tile {
    pub elems: Vec<Element>,
    pub elem_bytes: usize,
    pub shared_runs: Vec<(u64, u64)>,
    pub global_runs: Vec<(u64, u64)>,
}

/// The shared address where the byte at logical address `a` goes under a
/// swizzle mode (§5.5.7). The tables there show, per 128-byte row of shared
/// memory (`a / 128`), which 16-byte unit of the row each position holds: in
/// row r, position p holds unit p ^ (r mod 2) for 32B swizzle (pattern every
/// 256 bytes), p ^ (r mod 4) for 64B (every 512 bytes), p ^ (r mod 8) for
/// 128B (every 1024 bytes). The rows are counted from address 0, which is
/// what the manual's "swizzle base offset" ((dstMem / 128) % 8 for 128B ...)
/// says for a box that does not start on a pattern boundary. With 32-byte
/// atomicity the 32-byte units of a row move (p ^ (r mod 4)), with 64-byte
/// atomicity the 64-byte halves (p ^ (r mod 2)).
pub fn swizzle(mode: Swizzle, atomicity: Atomicity, a: u64) -> u64 {
    let row = a >> 7;
    match (mode, atomicity) {
        (Swizzle::None, _) => a,
        (Swizzle::B32, _) => a ^ ((row & 1) << 4),
        (Swizzle::B64, _) => a ^ ((row & 3) << 4),
        (Swizzle::B128, Atomicity::B32) => a ^ ((row & 3) << 5),
        (Swizzle::B128, Atomicity::B64) => a ^ ((row & 1) << 6),
        (Swizzle::B128, _) => a ^ ((row & 7) << 4),
    }
}

fn merge(mut runs: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    runs.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(runs.len());
    for (s, e) in runs {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Do sorted merged `runs` touch `[a, a + len)`?
pub fn touches(runs: &[(u64, u64)], a: u64, len: usize) -> bool {
    let k = runs.partition_point(|r| r.1 <= a);
    runs.get(k).is_some_and(|r| r.0 < a.saturating_add(len as u64))
}

/// The elements of the box at `coords` (one per dimension of the map),
/// the box starting at shared offset `shared_base`. The caller bounds the
/// box's size ([`TensorMap::box_bytes`]) first: up to 256^5 elements.
pub fn plan(map: &TensorMap, coords: &[i32], shared_base: u64) -> Tile {
    let es = map.elem.bytes();
    let n = map.box_counts();
    let total: usize = n.iter().product();
    let mut elems = Vec::with_capacity(total);
    let mut idx = [0usize; 5];
    for linear in 0..total {
        let mut rest = linear;
        for k in 0..5 {
            idx[k] = rest % n[k];
            rest /= n[k];
        }
        let mut addr = map.global_address;
        let mut inside = true;
        for k in 0..map.rank {
            let c = coords[k] as i64 + (idx[k] as i64) * map.element_strides[k] as i64;
            if c < 0 || c as u64 >= map.dims[k] {
                inside = false;
                break;
            }
            let step = if k == 0 { es as u64 } else { map.strides[k - 1] };
            addr = addr.wrapping_add((c as u64).wrapping_mul(step));
        }
        let logical = shared_base.wrapping_add((linear * es) as u64);
        elems.push(Element { shared: swizzle(map.swizzle, map.atomicity, logical), global: inside.then_some(addr) });
    }
    let shared_runs = merge(elems.iter().map(|e| (e.shared, e.shared.saturating_add(es as u64))).collect());
    let global_runs = merge(elems.iter().filter_map(|e| e.global.map(|g| (g, g.saturating_add(es as u64)))).collect());
    Tile { elems, elem_bytes: es, shared_runs, global_runs }
}

/// `[start, end)` of merged runs (`(0, 0)` for none).
pub fn span(runs: &[(u64, u64)]) -> (u64, u64) {
    match (runs.first(), runs.last()) {
        (Some(f), Some(l)) => (f.0, l.1),
        _ => (0, 0),
    }
}

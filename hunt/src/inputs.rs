//! Input values for fingerprinting and verifying: random bits mixed with
//! the edge values of each width (zero, one, all ones, the sign bit and its
//! neighbours ...: [`edge_values`]) and small numbers (shift amounts, bit
//! positions), from a seeded generator so that runs repeat; and the
//! exhaustive enumeration when the inputs have 16 bits or fewer in all.

use ptx_ir::eval::bits_mask;
use ptx_opt::rules::proof::{edge_values, Rng};

/// A generator of input assignments for inputs of the given widths.
pub struct InputGen {
    rng: Rng,
    edges: Vec<Vec<u128>>,
    widths: Vec<u8>,
}

impl InputGen {
    pub fn new(widths: &[u8], seed: u64) -> InputGen {
        InputGen { rng: Rng(seed), edges: widths.iter().map(|&w| edge_values(w)).collect(), widths: widths.to_vec() }
    }

    /// One value of input `k`.
    fn value(&mut self, k: usize) -> u128 {
        let w = self.widths[k] as u32;
        let m = bits_mask(w);
        let r = self.rng.next();
        match r % 16 {
            0..=8 => ((self.rng.next() as u128) << 64 | self.rng.next() as u128) & m,
            9..=12 => {
                let e = &self.edges[k];
                e[(self.rng.next() % e.len() as u64) as usize]
            }
            _ => (self.rng.next() % (2 * w as u64 + 2)) as u128 & m,
        }
    }

    /// One assignment of every input.
    pub fn assignment(&mut self) -> Vec<u128> {
        (0..self.widths.len()).map(|k| self.value(k)).collect()
    }

    /// Input `k` of `v` replaced by another value.
    pub fn perturb(&mut self, v: &[u128], k: usize) -> Vec<u128> {
        let mut u = v.to_vec();
        u[k] = self.value(k);
        u
    }
}

/// Every assignment of inputs of these widths, if they have at most
/// `max_bits` bits in all.
pub fn exhaustive(widths: &[u8], max_bits: u32) -> Option<Vec<Vec<u128>>> {
    let total: u32 = widths.iter().map(|&w| w as u32).sum();
    if total > max_bits {
        return None;
    }
    let mut all = Vec::with_capacity(1 << total);
    for n in 0u64..(1u64 << total) {
        let mut v = Vec::with_capacity(widths.len());
        let mut shift = 0;
        for &w in widths {
            v.push(((n >> shift) as u128) & bits_mask(w as u32));
            shift += w as u32;
        }
        all.push(v);
    }
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhaustive_covers_every_assignment_once() {
        let all = exhaustive(&[1, 2], 16).unwrap();
        assert_eq!(all.len(), 8);
        let mut seen: Vec<_> = all.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 8);
        assert!(all.iter().all(|v| v[0] <= 1 && v[1] <= 3));
        assert!(exhaustive(&[32], 16).is_none());
    }

    #[test]
    fn values_fit_their_widths() {
        let mut g = InputGen::new(&[1, 16, 64], 7);
        for _ in 0..1000 {
            let v = g.assignment();
            assert!(v[0] <= 1 && v[1] <= 0xffff && v[2] <= u64::MAX as u128);
        }
    }
}

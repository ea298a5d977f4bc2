//! Special registers (`%tid`, `%laneid`, `%clock64` ...), PTX ISA chapter 10.

use std::sync::OnceLock;

/// A predefined special register, an index into [`SpecialReg::names`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpecialReg(u16);

const FIXED: &[&str] = &[
    "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%gridid",
    "%is_explicit_cluster", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank",
    "%cluster_nctarank", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock",
    "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%reserved_smem_offset_begin",
    "%reserved_smem_offset_end", "%reserved_smem_offset_cap", "%total_smem_size", "%aggr_smem_size",
    "%dynamic_smem_size", "%current_graph_exec",
];

/// Registers whose value changes on its own (never merged or removed).
const VOLATILE: &[&str] = &["%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%smid", "%warpid"];

impl SpecialReg {
    /// Every special register name: the fixed ones, `%envreg0..31`, `%pm0..7`, `%pm0_64..%pm7_64`,
    /// `%reserved_smem_offset_0..1`.
    pub fn names() -> &'static [String] {
        static N: OnceLock<Vec<String>> = OnceLock::new();
        N.get_or_init(|| {
            let mut v: Vec<String> = FIXED.iter().map(|s| s.to_string()).collect();
            v.extend((0..32).map(|i| format!("%envreg{i}")));
            v.extend((0..8).map(|i| format!("%pm{i}")));
            v.extend((0..8).map(|i| format!("%pm{i}_64")));
            v.extend((0..2).map(|i| format!("%reserved_smem_offset_{i}")));
            v
        })
    }

    pub fn from_name(s: &str) -> Option<SpecialReg> {
        if !s.starts_with('%') {
            return None;
        }
        Self::names().iter().position(|n| n == s).map(|k| SpecialReg(k as u16))
    }

    pub fn name(self) -> &'static str {
        &Self::names()[self.0 as usize]
    }

    /// Reads a value that changes without any instruction writing it.
    pub fn is_volatile(self) -> bool {
        VOLATILE.contains(&self.name()) || self.name().starts_with("%pm")
    }
}

impl std::fmt::Debug for SpecialReg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// `%tid`: the thread's index in its CTA (`.x`, `.y`, `.z`).
    pub const TID: SpecialReg = SpecialReg(0);
    /// `%ntid`: the CTA's size.
    pub const NTID: SpecialReg = SpecialReg(1);
    /// `%laneid`.
    pub const LANEID: SpecialReg = SpecialReg(2);
    /// `%warpid`.
    pub const WARPID: SpecialReg = SpecialReg(3);
    /// `%ctaid`: the CTA's index in the grid.
    pub const CTAID: SpecialReg = SpecialReg(5);
    /// `%nctaid`: the grid's size in CTAs.
    pub const NCTAID: SpecialReg = SpecialReg(6);
    /// `%clock64`.
    pub const CLOCK64: SpecialReg = SpecialReg(24);

    /// A special register as written in an operand, with its component
    /// selector: `%tid.x`, `%laneid`.
    pub fn parse(text: &str) -> Option<(SpecialReg, Option<super::Selector>)> {
        match text.find('.') {
            Some(k) => Some((SpecialReg::from_name(&text[..k])?, Some(super::Selector::from_text(&text[k..])?))),
            None => Some((SpecialReg::from_name(text)?, None)),
        }
    }

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

    /// The largest value a read of this register (component `sel`) can give
    /// on any target (sm_1x's limits are lower still), from the manual's maximum values
    /// (PTX ISA 8.7, "Special Registers"): `%ntid.{x,y,z}` at most
    /// 1024/1024/64, so `%tid` below them; `%nctaid.{x,y,z}` at most
    /// 2^31−1/65535/65535, so `%ctaid` below them; `%laneid` below the warp
    /// size 32. `None` where the manual gives no bound (or for components
    /// other than `.x/.y/.z`).
    pub fn max_value(self, sel: Option<super::Selector>) -> Option<u128> {
        use super::Selector::{X, Y, Z};
        let (x, y, z): (u128, u128, u128) = match self {
            SpecialReg::TID => (1023, 1023, 63),
            SpecialReg::NTID => (1024, 1024, 64),
            SpecialReg::CTAID => ((1 << 31) - 2, 65534, 65534),
            SpecialReg::NCTAID => ((1 << 31) - 1, 65535, 65535),
            SpecialReg::LANEID => return sel.is_none().then_some(31),
            _ => return None,
        };
        match sel? {
            X => Some(x),
            Y => Some(y),
            Z => Some(z),
            _ => None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_constants_match_the_names() {
        let named = [(SpecialReg::TID, "%tid"), (SpecialReg::NTID, "%ntid"), (SpecialReg::LANEID, "%laneid"), (SpecialReg::WARPID, "%warpid"), (SpecialReg::CTAID, "%ctaid"), (SpecialReg::NCTAID, "%nctaid"), (SpecialReg::CLOCK64, "%clock64")];
        for (s, n) in named {
            assert_eq!(s.name(), n);
        }
        assert_eq!(SpecialReg::parse("%tid.x"), Some((SpecialReg::TID, Some(super::super::Selector::X))));
        assert_eq!(SpecialReg::parse("%laneid"), Some((SpecialReg::LANEID, None)));
        assert_eq!(SpecialReg::parse("%tid.q"), None);
        assert_eq!(SpecialReg::parse("%nosuch"), None);
    }
}

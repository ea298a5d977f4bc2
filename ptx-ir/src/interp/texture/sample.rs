//! The sampling arithmetic of texture fetches, free of interpreter state:
//! texel formats and their channels, address modes, nearest and linear
//! filtering (which texels a coordinate reads, with which weights), and the
//! conversion of channel values to the instruction's destination type.
//!
//! The PTX manual names the sampler fields (§5.3.2) and leaves their
//! meaning to the CUDA programming guide ("Texture Fetching" appendix),
//! which this follows:
//! - nearest: `tex(x) = T[floor(x)]` (x scaled by the size first when
//!   coordinates are normalized);
//! - linear: `xB = x - 0.5`, `i = floor(xB)`, `α = frac(xB)`,
//!   `tex(x) = (1-α)T[i] + αT[i+1]` (bilinear and trilinear alike); the guide
//!   says α is kept in 9-bit fixed point with 8 fractional bits but not how
//!   it is rounded nor how precise the blend is, so a linear result is
//!   exact only when every texel it blends is the same value, and otherwise
//!   [`Quality::Approx`] with the bound `dims · (max - min) · 2^-8` (plus one
//!   ulp) converted to ulps of the result — the interpreter's reading of the
//!   guide's precision, not a documented hardware figure;
//! - address modes per dimension: wrap (`i mod N`), mirror (reflected with
//!   period 2N), clamp (to the edge texel) and border (the border colour),
//!   applied to texel indices.
//!
//! Hardware converts coordinates to fixed point before it takes the floor;
//! the manual gives no precision, so a coordinate less than 1/256 texel
//! below a texel boundary may select either texel: such a nearest (or
//! `tld4` footprint) result is [`Quality::Unspecified`].

use crate::eval::Quality;

/// A channel's data type (CUDA's channel formats; `normalizable` ones can be
/// read as normalized floats).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelType {
    U8,
    S8,
    U16,
    S16,
    U32,
    S32,
    F16,
    F32,
}

impl ChannelType {
    pub fn bytes(self) -> u32 {
        match self {
            ChannelType::U8 | ChannelType::S8 => 1,
            ChannelType::U16 | ChannelType::S16 | ChannelType::F16 => 2,
            _ => 4,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ChannelType::F16 | ChannelType::F32)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, ChannelType::S8 | ChannelType::S16 | ChannelType::S32)
    }

    /// 8- and 16-bit integers can be read as normalized floats.
    pub fn normalizable(self) -> bool {
        matches!(self, ChannelType::U8 | ChannelType::S8 | ChannelType::U16 | ChannelType::S16)
    }

    pub fn name(self) -> &'static str {
        match self {
            ChannelType::U8 => "u8",
            ChannelType::S8 => "s8",
            ChannelType::U16 => "u16",
            ChannelType::S16 => "s16",
            ChannelType::U32 => "u32",
            ChannelType::S32 => "s32",
            ChannelType::F16 => "f16",
            ChannelType::F32 => "f32",
        }
    }

    pub fn from_name(s: &str) -> Option<ChannelType> {
        [ChannelType::U8, ChannelType::S8, ChannelType::U16, ChannelType::S16, ChannelType::U32, ChannelType::S32, ChannelType::F16, ChannelType::F32].into_iter().find(|c| c.name() == s)
    }
}

/// A texel's format: `count` channels (1, 2 or 4) of one type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TexelFormat {
    pub channel: ChannelType,
    pub count: u8,
}

impl TexelFormat {
    pub fn new(channel: ChannelType, count: u8) -> TexelFormat {
        TexelFormat { channel, count }
    }

    pub fn bytes(self) -> u32 {
        self.channel.bytes() * self.count as u32
    }

    /// `f32x4`, `u8` (one channel).
    pub fn name(self) -> String {
        if self.count == 1 {
            self.channel.name().to_string()
        } else {
            format!("{}x{}", self.channel.name(), self.count)
        }
    }

    /// Parses [`TexelFormat::name`]'s spelling.
    pub fn from_name(s: &str) -> Option<TexelFormat> {
        let (c, n) = match s.split_once('x') {
            Some((c, n)) => (c, n.parse().ok()?),
            None => (s, 1),
        };
        let f = TexelFormat { channel: ChannelType::from_name(c)?, count: n };
        [1, 2, 4].contains(&f.count).then_some(f)
    }

    /// The raw value of each channel of a texel's bytes (sign-extended for signed types).
    pub fn channels(self, bytes: &[u8]) -> [u64; 4] {
        let w = self.channel.bytes() as usize;
        let mut out = [0u64; 4];
        for (k, o) in out.iter_mut().enumerate().take(self.count as usize) {
            let mut v = 0u64;
            for (i, b) in bytes[k * w..(k + 1) * w].iter().enumerate() {
                v |= (*b as u64) << (8 * i);
            }
            if self.channel.is_signed() {
                let bits = 8 * w as u32;
                v = (((v << (64 - bits)) as i64) >> (64 - bits)) as u64;
            }
            *o = v;
        }
        out
    }
}

/// `filter_mode` (§5.3.2: "nearest, linear").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    Nearest,
    Linear,
}

impl Filter {
    pub fn from_name(s: &str) -> Option<Filter> {
        match s {
            "nearest" => Some(Filter::Nearest),
            "linear" => Some(Filter::Linear),
            _ => None,
        }
    }

    /// The value `txq.filter_mode` gives: the position in the manual's enum { nearest, linear }.
    pub fn query_value(self) -> u32 {
        self as u32
    }
}

/// `addr_mode_{0,1,2}` (§5.3.2: "wrap, mirror, clamp_ogl, clamp_to_edge, clamp_to_border").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    Wrap,
    Mirror,
    ClampOgl,
    ClampToEdge,
    ClampToBorder,
}

impl AddressMode {
    pub fn from_name(s: &str) -> Option<AddressMode> {
        match s {
            "wrap" => Some(AddressMode::Wrap),
            "mirror" => Some(AddressMode::Mirror),
            "clamp_ogl" => Some(AddressMode::ClampOgl),
            "clamp_to_edge" | "clamp" => Some(AddressMode::ClampToEdge),
            "clamp_to_border" | "border" => Some(AddressMode::ClampToBorder),
            _ => None,
        }
    }

    /// The value `txq.addr_mode_N` gives: the position in the manual's enum.
    pub fn query_value(self) -> u32 {
        self as u32
    }

    /// The texel index `i` reads along a dimension of `n` texels; `None`: the border colour.
    pub fn index(self, i: i64, n: u32) -> Option<u32> {
        let n = n as i64;
        match self {
            AddressMode::Wrap => Some(i.rem_euclid(n) as u32),
            AddressMode::Mirror => {
                let m = i.rem_euclid(2 * n);
                Some(if m < n { m } else { 2 * n - 1 - m } as u32)
            }
            AddressMode::ClampOgl | AddressMode::ClampToEdge => Some(i.clamp(0, n - 1) as u32),
            AddressMode::ClampToBorder => (0..n).contains(&i).then_some(i as u32),
        }
    }
}

/// One texel a fetch reads: its indices (None: outside, the border colour) and weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tap {
    pub at: Option<[u32; 3]>,
    pub weight: f64,
}

/// The texels a fetch reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub taps: Vec<Tap>,
    /// The coordinate is so close to a texel boundary that the hardware's
    /// unstated coordinate precision decides which texel is read.
    pub ambiguous: bool,
}

/// A coordinate less than this (in texels) below a boundary may round up in
/// the hardware's fixed-point coordinates.
const BOUNDARY_MARGIN: f64 = 1.0 / 256.0;

fn floor_with_margin(u: f64) -> (i64, f64, bool) {
    let f = u.floor();
    let frac = u - f;
    let i = if f < i64::MIN as f64 / 4.0 { i64::MIN / 4 } else if f > i64::MAX as f64 / 4.0 { i64::MAX / 4 } else { f as i64 };
    (i, frac, frac != 0.0 && 1.0 - frac < BOUNDARY_MARGIN)
}

/// The texels a float-coordinate fetch reads. `u` are coordinates in texels
/// (normalized ones already multiplied by the size), one per dimension.
pub fn plan_float(u: &[f64], size: &[u32], modes: &[AddressMode], filter: Filter) -> Plan {
    let d = u.len();
    let mut ambiguous = false;
    // Per dimension: (index, weight) pairs.
    let mut axes: Vec<Vec<(Option<u32>, f64)>> = Vec::with_capacity(d);
    for k in 0..d {
        match filter {
            Filter::Nearest => {
                let (i, _, amb) = floor_with_margin(u[k]);
                ambiguous |= amb;
                axes.push(vec![(modes[k].index(i, size[k]), 1.0)]);
            }
            Filter::Linear => {
                let (i, alpha, _) = floor_with_margin(u[k] - 0.5);
                axes.push(vec![(modes[k].index(i, size[k]), 1.0 - alpha), (modes[k].index(i + 1, size[k]), alpha)]);
            }
        }
    }
    let mut taps = vec![Tap { at: Some([0; 3]), weight: 1.0 }];
    for (k, axis) in axes.iter().enumerate() {
        let mut next = Vec::with_capacity(taps.len() * axis.len());
        for tap in &taps {
            for &(i, w) in axis {
                let at = match (tap.at, i) {
                    (Some(mut a), Some(i)) => {
                        a[k] = i;
                        Some(a)
                    }
                    _ => None,
                };
                next.push(Tap { at, weight: tap.weight * w });
            }
        }
        taps = next;
    }
    Plan { taps, ambiguous }
}

/// The texel an integer-coordinate fetch reads.
pub fn plan_int(i: &[i64], size: &[u32], modes: &[AddressMode]) -> Plan {
    let mut at = Some([0u32; 3]);
    for k in 0..i.len() {
        at = match (at, modes[k].index(i[k], size[k])) {
            (Some(mut a), Some(x)) => {
                a[k] = x;
                Some(a)
            }
            _ => None,
        };
    }
    Plan { taps: vec![Tap { at, weight: 1.0 }], ambiguous: false }
}

/// The `tld4` footprint of a 2d coordinate (texels in the manual's order:
/// counter-clockwise from the lower left, i.e. (i0,j1), (i1,j1), (i1,j0),
/// (i0,j0) with j growing downwards — the order of OpenGL's textureGather).
pub fn plan_gather(u: [f64; 2], size: [u32; 2], modes: [AddressMode; 2]) -> Plan {
    let (i0, _, ai) = floor_with_margin(u[0] - 0.5);
    let (j0, _, aj) = floor_with_margin(u[1] - 0.5);
    let at = |i: i64, j: i64| match (modes[0].index(i, size[0]), modes[1].index(j, size[1])) {
        (Some(x), Some(y)) => Some([x, y, 0]),
        _ => None,
    };
    let taps = [(i0, j0 + 1), (i0 + 1, j0 + 1), (i0 + 1, j0), (i0, j0)].iter().map(|&(i, j)| Tap { at: at(i, j), weight: 1.0 }).collect();
    Plan { taps, ambiguous: ai || aj }
}

/// The destination type of a fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readout {
    F32,
    F16,
    U32,
    S32,
}

/// An IEEE half's value.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    sign * match exp {
        0 => man * 2f64.powi(-24),
        31 if man == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A channel's value as a float (float channels, or integer channels read
/// normalized: unsigned `v / (2^n - 1)`, signed `max(v / (2^(n-1) - 1), -1)`,
/// CUDA's `cudaReadModeNormalizedFloat`). `None`: an integer channel read
/// as its integer.
pub fn channel_float(raw: u64, channel: ChannelType, normalized: bool) -> Option<f64> {
    Some(match channel {
        ChannelType::F32 => f32::from_bits(raw as u32) as f64,
        ChannelType::F16 => f16_to_f64(raw as u16),
        c if normalized && c.normalizable() => {
            let bits = 8 * c.bytes() as i32;
            if c.is_signed() {
                ((raw as i64) as f64 / (2f64.powi(bits - 1) - 1.0)).max(-1.0)
            } else {
                raw as f64 / (2f64.powi(bits) - 1.0)
            }
        }
        _ => return None,
    })
}

/// The quality of a normalized read: the conversion's rounding is not
/// stated, so results other than 0 and ±1 are within an ulp.
pub fn normalized_quality(raw: u64, channel: ChannelType) -> Quality {
    let bits = 8 * channel.bytes();
    let v = raw as i64;
    let max = if channel.is_signed() { (1i64 << (bits - 1)) - 1 } else { (1i64 << bits) - 1 };
    if v == 0 || v == max || v <= -max { Quality::Exact } else { Quality::Approx { ulps: 1 } }
}

/// The ulps of f32 `r` that an absolute error `err` spans (at least 1).
pub fn ulps_of(err: f64, r: f32) -> u32 {
    let a = r.abs();
    let ulp = if a < f32::MIN_POSITIVE { f32::from_bits(1) as f64 } else { (f32::from_bits(a.to_bits() + 1) - a) as f64 };
    let n = (err / ulp).ceil() + 1.0;
    if n >= (u32::MAX - 1) as f64 { u32::MAX - 1 } else { n as u32 }
}

/// Blends float texel values with their weights (one channel); the quality
/// says how far the hardware's result may be.
pub fn blend(values: &[(f64, f64)], dims: usize) -> (f32, Quality) {
    let live: Vec<(f64, f64)> = values.iter().copied().filter(|(_, w)| *w != 0.0).collect();
    // Every texel of the footprint the same value: any weights give it.
    if values.iter().all(|(v, _)| v.to_bits() == values[0].0.to_bits()) {
        return (values[0].0 as f32, if values[0].0.is_nan() { Quality::AnyNan } else { Quality::Exact });
    }
    if values.iter().any(|(v, _)| !v.is_finite()) {
        return (f32::NAN, Quality::Unspecified);
    }
    let r: f64 = live.iter().map(|(v, w)| v * w).sum();
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (v, _)| (lo.min(*v), hi.max(*v)));
    let err = dims as f64 * (hi - lo) * 2f64.powi(-8);
    let r32 = r as f32;
    (r32, Quality::Approx { ulps: ulps_of(err, r32) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CUDA programming guide, "Texture Fetching": the address modes on a
    /// 4-texel axis (wrap: frac; mirror: reflected; clamp; border: outside).
    #[test]
    fn address_modes_map_indices_as_the_guide_says() {
        let idx = |m: AddressMode| (-5..9).map(|i| m.index(i, 4)).collect::<Vec<_>>();
        let s = |v: &[u32]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
        assert_eq!(idx(AddressMode::Wrap), s(&[3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0]));
        assert_eq!(idx(AddressMode::Mirror), s(&[3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]));
        assert_eq!(idx(AddressMode::ClampToEdge), s(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3]));
        let b = idx(AddressMode::ClampToBorder);
        assert_eq!(b[5..9], s(&[0, 1, 2, 3])[..]);
        assert!(b[..5].iter().chain(&b[9..]).all(|x| x.is_none()));
    }

    #[test]
    fn nearest_takes_the_floor_and_flags_coordinates_just_below_a_boundary() {
        let p = plan_float(&[2.5], &[4], &[AddressMode::ClampToEdge], Filter::Nearest);
        assert_eq!(p.taps, vec![Tap { at: Some([2, 0, 0]), weight: 1.0 }]);
        assert!(!p.ambiguous);
        let p = plan_float(&[2.999], &[4], &[AddressMode::ClampToEdge], Filter::Nearest);
        assert_eq!(p.taps[0].at, Some([2, 0, 0]));
        assert!(p.ambiguous);
        assert!(!plan_float(&[3.0], &[4], &[AddressMode::ClampToEdge], Filter::Nearest).ambiguous);
    }

    /// The guide's linear formula: xB = x - 0.5, weights 1-α and α.
    #[test]
    fn linear_weights_follow_the_guide() {
        let p = plan_float(&[1.75], &[4], &[AddressMode::ClampToEdge], Filter::Linear);
        assert_eq!(p.taps, vec![Tap { at: Some([1, 0, 0]), weight: 0.75 }, Tap { at: Some([2, 0, 0]), weight: 0.25 }]);
        let p = plan_float(&[0.5, 0.25], &[4, 4], &[AddressMode::ClampToBorder; 2], Filter::Linear);
        assert_eq!(p.taps.len(), 4);
        assert_eq!(p.taps[0], Tap { at: None, weight: 0.25 });
        // Taps vary the last dimension fastest: (x0,y-1) is the border, (x0,y0) texel 0.
        assert_eq!(p.taps[1], Tap { at: Some([0, 0, 0]), weight: 0.75 });
        assert_eq!(p.taps[3], Tap { at: Some([1, 0, 0]), weight: 0.0 });
    }

    #[test]
    fn a_blend_of_equal_texels_is_exact_and_others_are_approximate() {
        assert_eq!(blend(&[(1.5, 0.3), (1.5, 0.7)], 1), (1.5, Quality::Exact));
        let (r, q) = blend(&[(1.0, 0.5), (2.0, 0.5)], 1);
        assert_eq!(r, 1.5);
        // (2 - 1) * 2^-8 is 2^15 ulps of 1.5 (ulp 2^-23), plus one.
        assert_eq!(q, Quality::Approx { ulps: (1 << 15) + 1 });
    }

    #[test]
    fn gather_order_is_counter_clockwise_from_lower_left() {
        let p = plan_gather([1.5, 1.5], [4, 4], [AddressMode::ClampToEdge; 2]);
        let at: Vec<_> = p.taps.iter().map(|t| t.at.unwrap()).collect();
        assert_eq!(at, vec![[1, 2, 0], [2, 2, 0], [2, 1, 0], [1, 1, 0]]);
    }

    #[test]
    fn formats_and_normalized_reads() {
        let f = TexelFormat::from_name("s8x4").unwrap();
        assert_eq!(f.channels(&[0xff, 1, 0x80, 0x7f]), [u64::MAX, 1, (-128i64) as u64, 127]);
        assert_eq!(channel_float(255, ChannelType::U8, true), Some(1.0));
        assert_eq!(channel_float((-128i64) as u64, ChannelType::S8, true), Some(-1.0));
        assert_eq!(channel_float(3, ChannelType::U8, false), None);
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert!(TexelFormat::from_name("f32x3").is_none());
    }
}

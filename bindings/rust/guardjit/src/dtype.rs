//! Element types: `DType` and the sealed `Element` trait that maps a Rust
//! element type to it.

use guardjit_sys as sys;
use std::fmt;

/// guardjit's element types (`gj_dtype`; DLPack codes in `to_dlpack`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    Float32,
    Float64,
    Float16,
    BFloat16,
    Int8,
    UInt8,
    Int16,
    Int32,
    Int64,
    Bool,
}

impl DType {
    /// Every dtype, in `gj_dtype` order.
    pub const ALL: [DType; 10] = [
        DType::Float32,
        DType::Float64,
        DType::Float16,
        DType::BFloat16,
        DType::Int8,
        DType::UInt8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::Bool,
    ];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::Float64 | DType::Int64 => 8,
            DType::Float32 | DType::Int32 => 4,
            DType::Float16 | DType::BFloat16 | DType::Int16 => 2,
            DType::Int8 | DType::UInt8 | DType::Bool => 1,
        }
    }

    /// torch's name: `"float32"`, `"bool"`.
    pub const fn name(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Int8 => "int8",
            DType::UInt8 => "uint8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Bool => "bool",
        }
    }

    /// The DLPack type guardjit uses for it (bool is `GJ_DL_BOOL`, 8 bits).
    pub const fn to_dlpack(self) -> sys::DLDataType {
        let (code, bits) = match self {
            DType::Float32 => (sys::kDLFloat as u8, 32),
            DType::Float64 => (sys::kDLFloat as u8, 64),
            DType::Float16 => (sys::kDLFloat as u8, 16),
            DType::BFloat16 => (sys::kDLBfloat as u8, 16),
            DType::Int8 => (sys::kDLInt as u8, 8),
            DType::UInt8 => (sys::kDLUInt as u8, 8),
            DType::Int16 => (sys::kDLInt as u8, 16),
            DType::Int32 => (sys::kDLInt as u8, 32),
            DType::Int64 => (sys::kDLInt as u8, 64),
            DType::Bool => (sys::GJ_DL_BOOL, 8),
        };
        sys::DLDataType {
            code,
            bits,
            lanes: 1,
        }
    }

    /// The dtype of a DLPack type, if guardjit has it.
    pub fn from_dlpack(t: sys::DLDataType) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.to_dlpack() == t)
    }

    /// The builder's `gj_dtype`.
    pub const fn to_raw(self) -> sys::gj_dtype {
        match self {
            DType::Float32 => sys::GJ_DTYPE_FLOAT32,
            DType::Float64 => sys::GJ_DTYPE_FLOAT64,
            DType::Float16 => sys::GJ_DTYPE_FLOAT16,
            DType::BFloat16 => sys::GJ_DTYPE_BFLOAT16,
            DType::Int8 => sys::GJ_DTYPE_INT8,
            DType::UInt8 => sys::GJ_DTYPE_UINT8,
            DType::Int16 => sys::GJ_DTYPE_INT16,
            DType::Int32 => sys::GJ_DTYPE_INT32,
            DType::Int64 => sys::GJ_DTYPE_INT64,
            DType::Bool => sys::GJ_DTYPE_BOOL,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod private {
    pub trait Sealed {}
}

/// A Rust type whose slices guardjit reads and writes as tensor data: `f32`,
/// `f64`, `i8`, `u8`, `i16`, `i32`, `i64`, `bool`, [`F16`], [`BF16`].
/// Sealed: each has the size and alignment of its `DTYPE`'s element, and
/// every value the library writes for that dtype is a valid value of it
/// (bool outputs are 0 or 1).
pub trait Element: private::Sealed + Copy + Send + Sync + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl private::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
        const _: () = assert!(std::mem::size_of::<$t>() == DType::$d.size());
    )*};
}

element! {
    f32 => Float32, f64 => Float64, F16 => Float16, BF16 => BFloat16, i8 => Int8, u8 => UInt8,
    i16 => Int16, i32 => Int32, i64 => Int64, bool => Bool,
}

/// IEEE half precision (float16), stored as its bits; converts to and from
/// `f32` (rounding to nearest, ties to even).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(pub u16);

impl F16 {
    pub const fn from_bits(bits: u16) -> F16 {
        F16(bits)
    }

    pub const fn to_bits(self) -> u16 {
        self.0
    }

    pub fn from_f32(value: f32) -> F16 {
        let x = value.to_bits();
        let sign = ((x >> 16) & 0x8000) as u16;
        let exp = ((x >> 23) & 0xff) as i32;
        let mant = x & 0x7f_ffff;
        if exp == 0xff {
            // Inf stays inf; NaN stays a quiet NaN.
            let nan = if mant != 0 {
                0x200 | (mant >> 13) as u16
            } else {
                0
            };
            return F16(sign | 0x7c00 | nan);
        }
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return F16(sign | 0x7c00);
        }
        // Keeps `kept` (the bits above `shift`), rounding the rest to
        // nearest even; a carry out of the mantissa bumps the exponent,
        // which is the right result (up to infinity).
        let round = |kept: u32, rest: u32, half: u32| -> u16 {
            (kept + u32::from(rest > half || (rest == half && kept & 1 == 1))) as u16
        };
        if e <= 0 {
            if e < -10 {
                return F16(sign);
            }
            let m = mant | 0x80_0000;
            let shift = (14 - e) as u32;
            return F16(sign | round(m >> shift, m & ((1 << shift) - 1), 1 << (shift - 1)));
        }
        F16(sign | round(((e as u32) << 10) | (mant >> 13), mant & 0x1fff, 0x1000))
    }

    pub fn to_f32(self) -> f32 {
        let h = u32::from(self.0);
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let mant = h & 0x3ff;
        let bits = match exp {
            0 => {
                // Zero or subnormal: mant * 2^-24, exact in f32.
                let v = mant as f32 * (1.0 / 16_777_216.0);
                return if sign != 0 { -v } else { v };
            }
            0x1f => sign | 0x7f80_0000 | (mant << 13),
            _ => sign | ((exp + 112) << 23) | (mant << 13),
        };
        f32::from_bits(bits)
    }
}

impl From<F16> for f32 {
    fn from(v: F16) -> f32 {
        v.to_f32()
    }
}

/// bfloat16, stored as its bits; converts to and from `f32` (rounding to
/// nearest, ties to even).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct BF16(pub u16);

impl BF16 {
    pub const fn from_bits(bits: u16) -> BF16 {
        BF16(bits)
    }

    pub const fn to_bits(self) -> u16 {
        self.0
    }

    pub fn from_f32(value: f32) -> BF16 {
        let x = value.to_bits();
        if value.is_nan() {
            return BF16(((x >> 16) as u16) | 0x40);
        }
        let rounded = x.wrapping_add(0x7fff + ((x >> 16) & 1));
        BF16((rounded >> 16) as u16)
    }

    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

impl From<BF16> for f32 {
    fn from(v: BF16) -> f32 {
        v.to_f32()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dlpack_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_dlpack(d.to_dlpack()), Some(d));
            assert_eq!(usize::from(d.to_dlpack().bits) / 8, d.size());
        }
        let vector = sys::DLDataType {
            code: sys::kDLFloat as u8,
            bits: 32,
            lanes: 4,
        };
        assert_eq!(DType::from_dlpack(vector), None);
    }

    #[test]
    fn f16_conversions() {
        for (f, bits) in [
            (0.0f32, 0x0000u16),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (0.5, 0x3800),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00), // rounds up to infinity
            (f32::INFINITY, 0x7c00),
            (6.103_515_6e-5, 0x0400), // smallest normal
            (5.960_464_5e-8, 0x0001), // smallest subnormal
            (2.980_232_2e-8, 0x0000), // half of it: ties to even (0)
            (1.000_976_6, 0x3c01),    // 1 + 2^-10
            (1.000_488_3, 0x3c00),    // 1 + 2^-11: tie, to even
            (1.001_464_8, 0x3c02),    // 1 + 3 * 2^-11: tie, to even
        ] {
            assert_eq!(F16::from_f32(f).to_bits(), bits, "{f}");
        }
        for bits in 0..=u16::MAX {
            let h = F16::from_bits(bits);
            let back = F16::from_f32(h.to_f32());
            if h.to_f32().is_nan() {
                assert!(back.to_f32().is_nan());
            } else {
                assert_eq!(back, h, "{bits:#06x}");
            }
        }
    }

    #[test]
    fn bf16_conversions() {
        assert_eq!(BF16::from_f32(1.0).to_bits(), 0x3f80);
        assert_eq!(BF16::from_f32(-3.0).to_f32(), -3.0);
        assert!(BF16::from_f32(f32::NAN).to_f32().is_nan());
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1).
        assert_eq!(BF16::from_f32(1.0 + 1.0 / 256.0).to_f32(), 1.0);
        assert_eq!(
            BF16::from_f32(1.0 + 3.0 / 256.0).to_f32(),
            1.0 + 4.0 / 256.0
        );
    }
}

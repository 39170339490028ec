//! The instruction set the per-element math ([`super::math`]) is written in, and its two
//! implementations: [`PtxScalar`] emits each operation as one PTX instruction, [`CpuScalar`]
//! performs it on `f32` in Rust with the same IEEE rounding, so the host model of a kernel
//! gives bit for bit what the device computes.

use super::ptx::{f32_imm, PtxBuilder};

/// The operations the math functions are written in. `F` is a float32 value, `I` a 32-bit
/// integer, `P` a predicate.
pub trait Scalar {
    type F: Clone;
    type I: Clone;
    type P: Clone;
    fn c(&mut self, value: f32) -> Self::F;
    fn add(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    fn sub(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    fn mul(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    fn div(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    /// `a * b + c` rounded once.
    fn fma(&mut self, a: &Self::F, b: &Self::F, c: &Self::F) -> Self::F;
    fn neg(&mut self, a: &Self::F) -> Self::F;
    fn abs(&mut self, a: &Self::F) -> Self::F;
    fn sqrt(&mut self, a: &Self::F) -> Self::F;
    /// Minimum/maximum that return NaN if either input is NaN.
    fn min_nan(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    fn max_nan(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    /// PTX `min.f32`/`max.f32` (CUDA's `fminf`/`fmaxf`): a NaN input gives the other input;
    /// of two zeros `max` gives +0.0 and `min` -0.0 unless both have that other sign.
    fn min(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    fn max(&mut self, a: &Self::F, b: &Self::F) -> Self::F;
    /// Round to the nearest integer, ties to even (stays a float).
    fn rint(&mut self, a: &Self::F) -> Self::F;
    /// Ordered comparisons: false when either input is NaN.
    fn lt(&mut self, a: &Self::F, b: &Self::F) -> Self::P;
    fn gt(&mut self, a: &Self::F, b: &Self::F) -> Self::P;
    fn eq(&mut self, a: &Self::F, b: &Self::F) -> Self::P;
    fn is_nan(&mut self, a: &Self::F) -> Self::P;
    fn select(&mut self, p: &Self::P, if_true: &Self::F, if_false: &Self::F) -> Self::F;
    fn select_i(&mut self, p: &Self::P, if_true: &Self::I, if_false: &Self::I) -> Self::I;
    fn ci(&mut self, value: i32) -> Self::I;
    fn bits_of(&mut self, a: &Self::F) -> Self::I;
    fn float_from_bits(&mut self, a: &Self::I) -> Self::F;
    fn iadd(&mut self, a: &Self::I, b: &Self::I) -> Self::I;
    fn isub(&mut self, a: &Self::I, b: &Self::I) -> Self::I;
    fn iand(&mut self, a: &Self::I, mask: u32) -> Self::I;
    fn ior(&mut self, a: &Self::I, bits: u32) -> Self::I;
    fn shl(&mut self, a: &Self::I, n: u32) -> Self::I;
    /// Arithmetic (sign-extending) right shift.
    fn shr_s(&mut self, a: &Self::I, n: u32) -> Self::I;
    /// Logical right shift.
    fn shr_u(&mut self, a: &Self::I, n: u32) -> Self::I;
    /// An integral float to int (the value must be integral and in range).
    fn f2i(&mut self, a: &Self::F) -> Self::I;
    fn i2f(&mut self, a: &Self::I) -> Self::F;
}

/// Evaluates on the host, with the rounding of the PTX instructions [`PtxScalar`] emits.
pub struct CpuScalar;

impl Scalar for CpuScalar {
    type F = f32;
    type I = i32;
    type P = bool;
    fn c(&mut self, value: f32) -> f32 {
        value
    }
    fn add(&mut self, a: &f32, b: &f32) -> f32 {
        a + b
    }
    fn sub(&mut self, a: &f32, b: &f32) -> f32 {
        a - b
    }
    fn mul(&mut self, a: &f32, b: &f32) -> f32 {
        a * b
    }
    fn div(&mut self, a: &f32, b: &f32) -> f32 {
        a / b
    }
    fn fma(&mut self, a: &f32, b: &f32, c: &f32) -> f32 {
        a.mul_add(*b, *c)
    }
    fn neg(&mut self, a: &f32) -> f32 {
        -a
    }
    fn abs(&mut self, a: &f32) -> f32 {
        a.abs()
    }
    fn sqrt(&mut self, a: &f32) -> f32 {
        a.sqrt()
    }
    fn min_nan(&mut self, a: &f32, b: &f32) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            a.min(*b)
        }
    }
    fn max_nan(&mut self, a: &f32, b: &f32) -> f32 {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            a.max(*b)
        }
    }
    fn min(&mut self, a: &f32, b: &f32) -> f32 {
        match (a.is_nan(), b.is_nan()) {
            (true, _) => *b,
            (_, true) => *a,
            // equal values: the same bits, or two zeros where -0.0 (sign bit set) wins
            _ if a == b => f32::from_bits(a.to_bits() | b.to_bits()),
            _ => if a < b { *a } else { *b },
        }
    }
    fn max(&mut self, a: &f32, b: &f32) -> f32 {
        match (a.is_nan(), b.is_nan()) {
            (true, _) => *b,
            (_, true) => *a,
            // equal values: the same bits, or two zeros where +0.0 (sign bit clear) wins
            _ if a == b => f32::from_bits(a.to_bits() & b.to_bits()),
            _ => if a > b { *a } else { *b },
        }
    }
    fn rint(&mut self, a: &f32) -> f32 {
        a.round_ties_even()
    }
    fn lt(&mut self, a: &f32, b: &f32) -> bool {
        a < b
    }
    fn gt(&mut self, a: &f32, b: &f32) -> bool {
        a > b
    }
    fn eq(&mut self, a: &f32, b: &f32) -> bool {
        a == b
    }
    fn is_nan(&mut self, a: &f32) -> bool {
        a.is_nan()
    }
    fn select(&mut self, p: &bool, if_true: &f32, if_false: &f32) -> f32 {
        if *p {
            *if_true
        } else {
            *if_false
        }
    }
    fn select_i(&mut self, p: &bool, if_true: &i32, if_false: &i32) -> i32 {
        if *p {
            *if_true
        } else {
            *if_false
        }
    }
    fn ci(&mut self, value: i32) -> i32 {
        value
    }
    fn bits_of(&mut self, a: &f32) -> i32 {
        a.to_bits() as i32
    }
    fn float_from_bits(&mut self, a: &i32) -> f32 {
        f32::from_bits(*a as u32)
    }
    fn iadd(&mut self, a: &i32, b: &i32) -> i32 {
        a.wrapping_add(*b)
    }
    fn isub(&mut self, a: &i32, b: &i32) -> i32 {
        a.wrapping_sub(*b)
    }
    fn iand(&mut self, a: &i32, mask: u32) -> i32 {
        ((*a as u32) & mask) as i32
    }
    fn ior(&mut self, a: &i32, bits: u32) -> i32 {
        ((*a as u32) | bits) as i32
    }
    fn shl(&mut self, a: &i32, n: u32) -> i32 {
        ((*a as u32) << n) as i32
    }
    fn shr_s(&mut self, a: &i32, n: u32) -> i32 {
        a >> n
    }
    fn shr_u(&mut self, a: &i32, n: u32) -> i32 {
        ((*a as u32) >> n) as i32
    }
    fn f2i(&mut self, a: &f32) -> i32 {
        // cvt.rni.s32.f32 saturates and maps NaN to 0, as `as` does.
        a.round_ties_even() as i32
    }
    fn i2f(&mut self, a: &i32) -> f32 {
        *a as f32
    }
}

/// Emits each operation as one PTX instruction into a [`PtxBuilder`].
pub struct PtxScalar<'b> {
    pub b: &'b mut PtxBuilder,
}

impl PtxScalar<'_> {
    fn f_op(&mut self, instruction: &str, args: &[&String]) -> String {
        let r = self.b.f32();
        let joined = args.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
        self.b.op(format!("{instruction} {r}, {joined}"));
        r
    }
    fn i_op(&mut self, instruction: &str, a: &String, imm: String) -> String {
        let r = self.b.b32();
        self.b.op(format!("{instruction} {r}, {a}, {imm}"));
        r
    }
    fn p_op(&mut self, cmp: &str, a: &String, b: &String) -> String {
        let p = self.b.pred();
        self.b.op(format!("setp.{cmp}.f32 {p}, {a}, {b}"));
        p
    }
}

impl Scalar for PtxScalar<'_> {
    type F = String;
    type I = String;
    type P = String;
    fn c(&mut self, value: f32) -> String {
        let r = self.b.f32();
        self.b.op(format!("mov.f32 {r}, {}", f32_imm(value)));
        r
    }
    fn add(&mut self, a: &String, b: &String) -> String {
        self.f_op("add.rn.f32", &[a, b])
    }
    fn sub(&mut self, a: &String, b: &String) -> String {
        self.f_op("sub.rn.f32", &[a, b])
    }
    fn mul(&mut self, a: &String, b: &String) -> String {
        self.f_op("mul.rn.f32", &[a, b])
    }
    fn div(&mut self, a: &String, b: &String) -> String {
        self.f_op("div.rn.f32", &[a, b])
    }
    fn fma(&mut self, a: &String, b: &String, c: &String) -> String {
        self.f_op("fma.rn.f32", &[a, b, c])
    }
    fn neg(&mut self, a: &String) -> String {
        self.f_op("neg.f32", &[a])
    }
    fn abs(&mut self, a: &String) -> String {
        self.f_op("abs.f32", &[a])
    }
    fn sqrt(&mut self, a: &String) -> String {
        self.f_op("sqrt.rn.f32", &[a])
    }
    fn min_nan(&mut self, a: &String, b: &String) -> String {
        self.f_op("min.NaN.f32", &[a, b])
    }
    fn max_nan(&mut self, a: &String, b: &String) -> String {
        self.f_op("max.NaN.f32", &[a, b])
    }
    fn min(&mut self, a: &String, b: &String) -> String {
        self.f_op("min.f32", &[a, b])
    }
    fn max(&mut self, a: &String, b: &String) -> String {
        self.f_op("max.f32", &[a, b])
    }
    fn rint(&mut self, a: &String) -> String {
        self.f_op("cvt.rni.f32.f32", &[a])
    }
    fn lt(&mut self, a: &String, b: &String) -> String {
        self.p_op("lt", a, b)
    }
    fn gt(&mut self, a: &String, b: &String) -> String {
        self.p_op("gt", a, b)
    }
    fn eq(&mut self, a: &String, b: &String) -> String {
        self.p_op("eq", a, b)
    }
    fn is_nan(&mut self, a: &String) -> String {
        self.p_op("nan", a, a)
    }
    fn select(&mut self, p: &String, if_true: &String, if_false: &String) -> String {
        let r = self.b.f32();
        self.b.op(format!("selp.f32 {r}, {if_true}, {if_false}, {p}"));
        r
    }
    fn select_i(&mut self, p: &String, if_true: &String, if_false: &String) -> String {
        let r = self.b.b32();
        self.b.op(format!("selp.b32 {r}, {if_true}, {if_false}, {p}"));
        r
    }
    fn ci(&mut self, value: i32) -> String {
        let r = self.b.b32();
        self.b.op(format!("mov.b32 {r}, {value}"));
        r
    }
    fn bits_of(&mut self, a: &String) -> String {
        let r = self.b.b32();
        self.b.op(format!("mov.b32 {r}, {a}"));
        r
    }
    fn float_from_bits(&mut self, a: &String) -> String {
        let r = self.b.f32();
        self.b.op(format!("mov.b32 {r}, {a}"));
        r
    }
    fn iadd(&mut self, a: &String, b: &String) -> String {
        self.i_op("add.s32", a, b.clone())
    }
    fn isub(&mut self, a: &String, b: &String) -> String {
        self.i_op("sub.s32", a, b.clone())
    }
    fn iand(&mut self, a: &String, mask: u32) -> String {
        self.i_op("and.b32", a, format!("{mask}"))
    }
    fn ior(&mut self, a: &String, bits: u32) -> String {
        self.i_op("or.b32", a, format!("{bits}"))
    }
    fn shl(&mut self, a: &String, n: u32) -> String {
        self.i_op("shl.b32", a, format!("{n}"))
    }
    fn shr_s(&mut self, a: &String, n: u32) -> String {
        self.i_op("shr.s32", a, format!("{n}"))
    }
    fn shr_u(&mut self, a: &String, n: u32) -> String {
        self.i_op("shr.u32", a, format!("{n}"))
    }
    fn f2i(&mut self, a: &String) -> String {
        let r = self.b.b32();
        self.b.op(format!("cvt.rni.s32.f32 {r}, {a}"));
        r
    }
    fn i2f(&mut self, a: &String) -> String {
        let r = self.b.f32();
        self.b.op(format!("cvt.rn.f32.s32 {r}, {a}"));
        r
    }
}


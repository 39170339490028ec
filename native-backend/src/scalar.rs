//! Python `int` semantics on `i64` and `float` semantics on `f64`: what generated code uses
//! for scalar arithmetic and `for … in range(…)`.
//!
//! Python integers are unbounded, so a result outside the 64-bit range can never be
//! returned silently: every operation is checked and reports [`Error::Overflow`] instead of
//! wrapping. Division floors toward −∞ and `%` takes the sign of the divisor, exactly as
//! CPython does; division by zero carries CPython's own messages.

use crate::error::{Error, Result};

const ADD_OVERFLOW: &str =
    "torchlower: integer overflow: the result of '+' does not fit in 64 bits";
const SUB_OVERFLOW: &str =
    "torchlower: integer overflow: the result of '-' does not fit in 64 bits";
const MUL_OVERFLOW: &str =
    "torchlower: integer overflow: the result of '*' does not fit in 64 bits";
const FLOORDIV_OVERFLOW: &str =
    "torchlower: integer overflow: the result of '//' does not fit in 64 bits";
const POW_OVERFLOW: &str =
    "torchlower: integer overflow: the result of '**' does not fit in 64 bits";
const NEG_OVERFLOW: &str =
    "torchlower: integer overflow: the result of unary '-' does not fit in 64 bits";

/// CPython's message for `a // 0` (and `divmod(a, 0)`).
pub const FLOORDIV_BY_ZERO: &str = "integer division or modulo by zero";
/// CPython's message for `a % 0`.
pub const MODULO_BY_ZERO: &str = "integer modulo by zero";
/// CPython's message for `range(a, b, 0)`.
pub const RANGE_STEP_ZERO: &str = "range() arg 3 must not be zero";

/// Python `a + b`.
#[inline]
pub fn add(a: i64, b: i64) -> Result<i64> {
    a.checked_add(b).ok_or(Error::Overflow(ADD_OVERFLOW))
}

/// Python `a - b`.
#[inline]
pub fn sub(a: i64, b: i64) -> Result<i64> {
    a.checked_sub(b).ok_or(Error::Overflow(SUB_OVERFLOW))
}

/// Python `a * b`.
#[inline]
pub fn mul(a: i64, b: i64) -> Result<i64> {
    a.checked_mul(b).ok_or(Error::Overflow(MUL_OVERFLOW))
}

/// Python unary `-a`.
#[inline]
pub fn neg(a: i64) -> Result<i64> {
    a.checked_neg().ok_or(Error::Overflow(NEG_OVERFLOW))
}

/// Python `a ** b` of ints, typed int by the analyzer (a non-negative literal exponent, or one
/// known only at run time: `2 ** math.ceil(math.log2(n))`). `0 ** b` raises CPython's
/// `ZeroDivisionError` for a negative `b`; any other negative `b` makes Python's result a float,
/// which the analyzed types do not hold, so native code refuses (`ValueError`: auto mode reruns
/// Python).
#[inline]
pub fn pow(a: i64, b: i64) -> Result<i64> {
    if b < 0 && a == 0 {
        return Err(Error::ZeroDivision("0.0 cannot be raised to a negative power"));
    }
    if b < 0 {
        return Err(Error::Value(format!(
            "torchlower: {a} ** {b} is a float in Python, not the int this code was analyzed for (native code refuses; auto mode reruns Python)"
        )));
    }
    u32::try_from(b).ok().and_then(|b| a.checked_pow(b)).ok_or(Error::Overflow(POW_OVERFLOW))
}

/// Python `a // b`: the quotient rounded toward negative infinity.
#[inline]
pub fn floordiv(a: i64, b: i64) -> Result<i64> {
    if b == 0 {
        return Err(Error::ZeroDivision(FLOORDIV_BY_ZERO));
    }
    // The only overflowing case is i64::MIN // -1 (= 2**63).
    torchlower_ops::python_int::floor_div(a, b).ok_or(Error::Overflow(FLOORDIV_OVERFLOW))
}

/// Python `a % b`: the remainder with the sign of the divisor (`a == b * (a // b) + a % b`).
#[inline]
pub fn rem(a: i64, b: i64) -> Result<i64> {
    torchlower_ops::python_int::floor_mod(a, b).ok_or(Error::ZeroDivision(MODULO_BY_ZERO))
}

// --- float ----------------------------------------------------------------------------------
//
// `+ - *` on floats are plain IEEE-754 double arithmetic in both CPython and Rust (emitted
// inline). What raises in CPython is here, with CPython's messages.

/// CPython's message for `x / 0.0`.
pub const FLOAT_DIV_BY_ZERO: &str = "float division by zero";
/// CPython's message for `a / 0` on ints.
pub const INT_DIV_BY_ZERO: &str = "division by zero";
/// CPython's message for `0.0 ** -y`.
pub const ZERO_NEGATIVE_POWER: &str = "0.0 cannot be raised to a negative power";
/// CPython's message for a float result out of range (`OverflowError`, errno ERANGE).
const FLOAT_RANGE: &str = "(34, 'Numerical result out of range')";
/// CPython's `math` domain error.
pub const MATH_DOMAIN: &str = "math domain error";
/// Beyond 2**53 CPython's int true division rounds the exact quotient, not the converted
/// operands; native code refuses rather than differ (`OverflowError`: auto mode reruns Python).
const INT_TRUE_DIV_RANGE: &str =
    "torchlower: int true division with an operand beyond 2**53 is not native (CPython rounds the exact quotient)";

/// Python `a / b` on floats.
#[inline]
pub fn true_div(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 {
        return Err(Error::ZeroDivision(FLOAT_DIV_BY_ZERO));
    }
    Ok(a / b)
}

/// Python `a / b` on ints (a float): exact operands below 2**53 divided once, as CPython does.
#[inline]
pub fn int_true_div(a: i64, b: i64) -> Result<f64> {
    const EXACT: u64 = 1 << 53;
    if b == 0 {
        return Err(Error::ZeroDivision(INT_DIV_BY_ZERO));
    }
    if a.unsigned_abs() > EXACT || b.unsigned_abs() > EXACT {
        return Err(Error::Overflow(INT_TRUE_DIV_RANGE));
    }
    Ok(a as f64 / b as f64)
}

/// Whether `x` is an odd integer (CPython's `DOUBLE_IS_ODD_INTEGER`).
fn is_odd_integer(x: f64) -> bool {
    x.is_finite() && x.rem_euclid(2.0) == 1.0
}

/// Python `a ** b` on floats: CPython's `float_pow` special cases, then the C library's
/// `pow`. A negative base with a fractional exponent is complex in Python: refused with a
/// `ValueError` (auto mode reruns Python, which returns the complex number).
pub fn float_pow(base: f64, exponent: f64) -> Result<f64> {
    if exponent == 0.0 {
        return Ok(1.0);
    }
    if base.is_nan() {
        return Ok(base);
    }
    if exponent.is_nan() {
        return Ok(if base == 1.0 { 1.0 } else { exponent });
    }
    if exponent.is_infinite() {
        let magnitude = base.abs();
        return Ok(if magnitude == 1.0 {
            1.0
        } else if (exponent > 0.0) == (magnitude > 1.0) {
            f64::INFINITY
        } else {
            0.0
        });
    }
    if base.is_infinite() {
        let odd = is_odd_integer(exponent);
        return Ok(match (exponent > 0.0, odd) {
            (true, true) => base,
            (true, false) => base.abs(),
            (false, true) => 0.0f64.copysign(base),
            (false, false) => 0.0,
        });
    }
    if base == 0.0 {
        if exponent < 0.0 {
            return Err(Error::ZeroDivision(ZERO_NEGATIVE_POWER));
        }
        return Ok(if is_odd_integer(exponent) { base } else { 0.0 });
    }
    let (magnitude, negate) = if base < 0.0 {
        if exponent != exponent.floor() {
            return Err(Error::Value("torchlower: a negative float to a fractional power is complex in Python".into()));
        }
        (-base, is_odd_integer(exponent))
    } else {
        (base, false)
    };
    if magnitude == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    let result = magnitude.powf(exponent);
    if result.is_infinite() {
        return Err(Error::Overflow(FLOAT_RANGE));
    }
    Ok(if negate { -result } else { result })
}

/// An int compared with a float: CPython compares them exactly; the conversion to `f64` is
/// exact up to 2**53, beyond it native code refuses (`OverflowError`: auto mode reruns Python).
#[inline]
pub fn exact_float(n: i64) -> Result<f64> {
    if n.unsigned_abs() > 1 << 53 {
        return Err(Error::Overflow("torchlower: comparing an int beyond 2**53 with a float is not native"));
    }
    Ok(n as f64)
}

/// `math.sqrt(x)`.
#[inline]
pub fn math_sqrt(x: f64) -> Result<f64> {
    if x < 0.0 {
        return Err(Error::Value(MATH_DOMAIN.into()));
    }
    Ok(x.sqrt())
}

/// `math.log(x)` (one argument): CPython's `ValueError` at and below zero; the platform's
/// `log`, as CPython calls it.
#[inline]
pub fn math_log(x: f64) -> Result<f64> {
    if x <= 0.0 {
        return Err(Error::Value(MATH_DOMAIN.into()));
    }
    Ok(x.ln())
}

/// `math.log2(x)`: CPython's `ValueError` at and below zero; the platform's `log2`, as CPython
/// calls it.
#[inline]
pub fn math_log2(x: f64) -> Result<f64> {
    if x <= 0.0 {
        return Err(Error::Value(MATH_DOMAIN.into()));
    }
    Ok(x.log2())
}

/// `math.floor(x)` of a float: an int.
#[inline]
pub fn math_floor(x: f64) -> Result<i64> {
    float_to_int(x.floor())
}

/// `math.ceil(x)` of a float: an int.
#[inline]
pub fn math_ceil(x: f64) -> Result<i64> {
    float_to_int(x.ceil())
}

/// `int(x)` / `math.trunc(x)` of a float: an int, toward zero.
#[inline]
pub fn math_trunc(x: f64) -> Result<i64> {
    float_to_int(x.trunc())
}

/// An integral float as a Python int: CPython's `ValueError` for NaN and `OverflowError` for
/// ±inf; a value beyond 64 bits, which Python would keep, refuses (`OverflowError`: auto mode
/// reruns Python).
fn float_to_int(v: f64) -> Result<i64> {
    if v.is_nan() {
        return Err(Error::Value("cannot convert float NaN to integer".into()));
    }
    if v.is_infinite() {
        return Err(Error::Overflow("cannot convert float infinity to integer"));
    }
    // 2**63 is exact in f64; every integral float below it in magnitude fits
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
        return Err(Error::Overflow("torchlower: integer overflow: the int does not fit in 64 bits (auto mode reruns Python)"));
    }
    Ok(v as i64)
}

/// CPython's `math` range error (`OverflowError`).
const MATH_RANGE: &str = "math range error";

/// `math.exp(x)`: CPython's `OverflowError` when a finite `x` overflows.
#[inline]
pub fn math_exp(x: f64) -> Result<f64> {
    let y = x.exp();
    if y.is_infinite() && x.is_finite() {
        return Err(Error::Overflow(MATH_RANGE));
    }
    Ok(y)
}

/// Python's `min(a, b, …)`: the first smallest, comparing left to right as CPython does
/// (`x < result`), so a leading NaN stays and a later one is skipped.
pub fn py_min_f64(values: &[f64]) -> f64 {
    values.iter().copied().reduce(|result, x| if x < result { x } else { result }).unwrap_or(f64::NAN)
}

/// Python's `max(a, b, …)`: the first largest (`x > result`).
pub fn py_max_f64(values: &[f64]) -> f64 {
    values.iter().copied().reduce(|result, x| if x > result { x } else { result }).unwrap_or(f64::NAN)
}

/// Python's `min(a, b, …)` of ints.
pub fn py_min_i64(values: &[i64]) -> i64 {
    values.iter().copied().min().unwrap_or(0)
}

/// Python's `max(a, b, …)` of ints.
pub fn py_max_i64(values: &[i64]) -> i64 {
    values.iter().copied().max().unwrap_or(0)
}

/// Python `range(start, stop, step)`.
pub fn range(start: i64, stop: i64, step: i64) -> Result<PyRange> {
    if step == 0 {
        return Err(Error::Value(RANGE_STEP_ZERO.to_string()));
    }
    // len = max(0, ceil((stop - start) / step)), computed in i128 so no bound can overflow.
    let span = i128::from(stop) - i128::from(start);
    let step_wide = i128::from(step);
    let len = if step > 0 {
        if span <= 0 { 0 } else { (span + step_wide - 1) / step_wide }
    } else if span >= 0 {
        0
    } else {
        (span + step_wide + 1) / step_wide
    };
    // 0 <= len <= 2**64 - 1 because every element is a distinct i64.
    let remaining = u64::try_from(len).map_err(|_| Error::Value("range() too long".to_string()))?;
    Ok(PyRange { next: start, step, remaining })
}

/// The iterator of [`range`]: yields `start, start + step, …` while inside the bounds.
#[derive(Debug, Clone)]
pub struct PyRange {
    next: i64,
    step: i64,
    remaining: u64,
}

impl Iterator for PyRange {
    type Item = i64;

    #[inline]
    fn next(&mut self) -> Option<i64> {
        if self.remaining == 0 {
            return None;
        }
        let value = self.next;
        self.remaining -= 1;
        if self.remaining > 0 {
            // Another element exists, so value + step lies between start and stop and fits
            // in i64: the addition never actually wraps.
            self.next = value.wrapping_add(self.step);
        }
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match usize::try_from(self.remaining) {
            Ok(n) => (n, Some(n)),
            Err(_) => (usize::MAX, None),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Property-style checks against Python's definitions computed exactly in i128:
    //! `a // b == floor(a / b)`, `a % b == a - b * (a // b)`, `range` by its definition.
    use super::*;

    /// Every float printed reads back as itself, and the notation switches where CPython's
    /// does (fixed for exponents -4..=15). `tests/python/test_dropout.py` compares the
    /// messages that show these with eager's over many values.
    #[test]
    fn float_repr_round_trips_in_cpythons_notation() {
        for v in [1.5, -0.1, 2.0, 1e-4, 1e-5, 1.25e-5, 1e15, 1e16, 1.5e16, 123456789.125, -7e-300, f64::MAX, f64::MIN_POSITIVE, 5e-324] {
            let text = float_repr(v);
            assert_eq!(text.parse::<f64>().ok(), Some(v), "{text}");
            let scientific = text.contains('e');
            let exponent = v.abs().log10().floor() as i32;
            assert_eq!(scientific, !(-4..16).contains(&exponent), "{text}");
            assert!(scientific || text.contains('.'), "{text}");
        }
        assert_eq!(float_repr(1e-5), "1e-05");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(2.0), "2.0");
        assert_eq!(float_repr(-0.0), "-0.0");
    }

    /// Values around zero, around every small power of two and at the i64 extremes.
    fn interesting_values() -> Vec<i64> {
        let mut values: Vec<i64> = (-20..=20).collect();
        for shift in [7u32, 8, 15, 16, 31, 32, 62] {
            let p = 1i64 << shift;
            values.extend([p - 1, p, p + 1, -p - 1, -p, -p + 1]);
        }
        values.extend([i64::MIN, i64::MIN + 1, i64::MIN + 2, i64::MAX, i64::MAX - 1, i64::MAX - 2]);
        values
    }

    /// Python's floor division on exact integers.
    fn python_floordiv(a: i128, b: i128) -> i128 {
        let q = a / b;
        if (a % b != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q }
    }

    fn as_python_result(value: i128) -> Option<i64> {
        i64::try_from(value).ok()
    }

    #[test]
    fn add_sub_mul_neg_are_exact_or_overflow() {
        let values = interesting_values();
        for &a in &values {
            let (wa, expected_neg) = (i128::from(a), as_python_result(-i128::from(a)));
            assert_eq!(neg(a).ok(), expected_neg, "-({a})");
            if expected_neg.is_none() {
                assert!(matches!(neg(a), Err(Error::Overflow(_))));
            }
            for &b in &values {
                let wb = i128::from(b);
                for (got, exact, op) in [
                    (add(a, b), wa + wb, "+"),
                    (sub(a, b), wa - wb, "-"),
                    (mul(a, b), wa * wb, "*"),
                ] {
                    match as_python_result(exact) {
                        Some(expected) => assert_eq!(got.ok(), Some(expected), "{a} {op} {b}"),
                        None => assert!(matches!(got, Err(Error::Overflow(_))), "{a} {op} {b}"),
                    }
                }
            }
        }
    }

    #[test]
    fn floordiv_and_rem_follow_python() {
        let values = interesting_values();
        for &a in &values {
            for &b in &values {
                if b == 0 {
                    assert!(matches!(floordiv(a, b), Err(Error::ZeroDivision(FLOORDIV_BY_ZERO))));
                    assert!(matches!(rem(a, b), Err(Error::ZeroDivision(MODULO_BY_ZERO))));
                    continue;
                }
                let (wa, wb) = (i128::from(a), i128::from(b));
                let q = python_floordiv(wa, wb);
                let r = wa - wb * q;
                match as_python_result(q) {
                    Some(expected) => assert_eq!(floordiv(a, b).ok(), Some(expected), "{a} // {b}"),
                    None => assert!(matches!(floordiv(a, b), Err(Error::Overflow(_)))),
                }
                // The remainder always fits: |r| < |b|.
                assert_eq!(rem(a, b).ok(), as_python_result(r), "{a} % {b}");
                assert!(r == 0 || (r < 0) == (wb < 0), "sign of {a} % {b}");
            }
        }
    }

    #[test]
    fn documented_examples() {
        assert_eq!(floordiv(-7, 2).ok(), Some(-4));
        assert_eq!(floordiv(7, -2).ok(), Some(-4));
        assert_eq!(rem(-7, 2).ok(), Some(1));
        assert_eq!(rem(7, -2).ok(), Some(-1));
        assert_eq!(rem(i64::MIN, -1).ok(), Some(0));
        assert!(matches!(floordiv(i64::MIN, -1), Err(Error::Overflow(_))));
    }

    /// `range` by its definition: r[i] = start + step*i for i >= 0 while inside the bound.
    fn python_range(start: i64, stop: i64, step: i64) -> Vec<i64> {
        let (mut value, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
        let mut out = Vec::new();
        while (step > 0 && value < stop) || (step < 0 && value > stop) {
            out.push(i64::try_from(value).expect("inside [start, stop)"));
            value += step;
        }
        out
    }

    #[test]
    fn range_matches_python_for_small_arguments() {
        for start in -12..=12 {
            for stop in -12..=12 {
                for step in -7..=7 {
                    if step == 0 {
                        assert!(matches!(range(start, stop, step), Err(Error::Value(_))));
                        continue;
                    }
                    let got: Vec<i64> = range(start, stop, step).expect("step != 0").collect();
                    assert_eq!(got, python_range(start, stop, step), "range({start}, {stop}, {step})");
                }
            }
        }
    }

    #[test]
    fn range_near_the_i64_bounds_never_wraps() {
        let got: Vec<i64> = range(i64::MAX - 5, i64::MAX, 2).expect("valid").collect();
        assert_eq!(got, vec![i64::MAX - 5, i64::MAX - 3, i64::MAX - 1]);
        let got: Vec<i64> = range(i64::MIN + 5, i64::MIN, -2).expect("valid").collect();
        assert_eq!(got, vec![i64::MIN + 5, i64::MIN + 3, i64::MIN + 1]);
        let got: Vec<i64> = range(i64::MIN, i64::MAX, i64::MAX).expect("valid").collect();
        assert_eq!(got, vec![i64::MIN, -1, i64::MAX - 1]);
        let huge = range(i64::MIN, i64::MAX, 1).expect("valid");
        assert_eq!(huge.size_hint().0 as u128, u128::from(u64::MAX));
        let mut tail = range(i64::MAX - 1, i64::MIN, i64::MIN).expect("valid");
        assert_eq!(tail.next(), Some(i64::MAX - 1));
        assert_eq!(tail.next(), Some(-2));
        assert_eq!(tail.next(), None);
    }
}

/// A Python number passed where an op takes a float (`F.leaky_relu(x, 0)`, `eps=1e-5`).
pub trait PyNumber {
    /// The value as CPython's `float(n)` gives it (an int correctly rounded).
    fn py_float(self) -> f64;
}

impl PyNumber for f64 {
    fn py_float(self) -> f64 {
        self
    }
}

impl PyNumber for i64 {
    fn py_float(self) -> f64 {
        // `as` rounds to nearest, ties to even: CPython's int.__float__
        self as f64
    }
}

/// `repr(v)` of a Python float, for eager's messages that show one: the shortest digits that
/// read back as `v`, in fixed notation for exponents -4 to 15 (`0.0001`, `2.0`) and in
/// scientific notation otherwise (`1e-05`, `1.5e+16`), as CPython prints floats.
pub fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` also prints the shortest round-tripping digits: "-1.5e-5"
    let scientific = format!("{v:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
        } else if point as usize >= digits.len() {
            format!("{sign}{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!("{sign}{}.{}", &digits[..point as usize], &digits[point as usize..])
        }
    } else {
        let mantissa = if digits.len() == 1 { digits } else { format!("{}.{}", &digits[..1], &digits[1..]) };
        format!("{sign}{mantissa}e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.unsigned_abs())
    }
}

/// `n` as a float parameter of an op (see [`PyNumber`]).
#[inline]
pub fn py_float(n: impl PyNumber) -> f64 {
    n.py_float()
}

//! The protocol of the hand-run timing tests (`cargo test --release --lib timing -- --ignored
//! --nocapture`): our kernel and the reference alternate, one warm-up each, then 15 pairs.

/// `time(true)` times our kernel, `time(false)` the reference (µs per call); returns the
/// medians of both and the median of the paired ratios reference / ours.
pub(crate) fn paired_medians(mut time: impl FnMut(bool) -> f64) -> (f64, f64, f64) {
    time(true);
    time(false);
    let (mut ours, mut reference, mut ratios) = (vec![], vec![], vec![]);
    for _ in 0..15 {
        let (o, r) = (time(true), time(false));
        ours.push(o);
        reference.push(r);
        ratios.push(r / o);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut ours), median(&mut reference), median(&mut ratios))
}

//! How the server's seats are shared among the limited priority levels
//! (upstream's `computeConcurrencyAllocation`): each level gets at least
//! its nominal seats minus what it lends, at most its nominal seats plus
//! what it may borrow, and between those bounds a share proportional to its
//! recent demand, scaled by one factor chosen so that the shares add up to
//! the server's concurrency limit.

/// One level's bounds and demand, in seats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Nominal seats minus lendable seats: never lent away.
    pub lower: f64,
    /// Nominal seats plus the borrowing limit.
    pub upper: f64,
    /// The seats the level wanted lately (its demand high-water mark),
    /// clamped into `[lower, upper]`.
    pub target: f64,
}

/// The allocation of `total` seats over `levels`, in the same order:
/// `clamp(f * target, lower, upper)` for the one `f` that makes the sum
/// `total` (or as close as the bounds allow).
pub fn allocate(levels: &[Bounds], total: f64) -> Vec<f64> {
    let at = |f: f64| -> Vec<f64> {
        levels
            .iter()
            .map(|b| (f * b.target).clamp(b.lower, b.upper.max(b.lower)))
            .collect()
    };
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let lowest = at(0.0);
    if sum(&lowest) >= total || levels.iter().all(|b| b.target <= 0.0) {
        return lowest;
    }
    // The sum grows monotonically with f; bisect.
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while sum(&at(hi)) < total && hi < 1e9 {
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if sum(&at(mid)) < total {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    at(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(lower: f64, upper: f64, target: f64) -> Bounds {
        Bounds {
            lower,
            upper,
            target,
        }
    }

    #[test]
    fn idle_levels_lend_to_busy_ones() {
        // Two levels of 50 nominal seats each, both lending half.
        let a = allocate(&[b(25.0, 100.0, 100.0), b(25.0, 100.0, 25.0)], 100.0);
        assert!((a.iter().sum::<f64>() - 100.0).abs() < 1e-6);
        assert!(a[0] > 70.0 && a[1] >= 25.0, "{a:?}");
    }

    #[test]
    fn a_level_never_goes_below_what_it_keeps() {
        let a = allocate(&[b(30.0, 30.0, 30.0), b(10.0, 500.0, 500.0)], 100.0);
        assert_eq!(a[0], 30.0);
        assert!((a[1] - 70.0).abs() < 1e-6);
    }

    #[test]
    fn no_demand_keeps_the_lower_bounds() {
        let a = allocate(&[b(5.0, 10.0, 0.0), b(5.0, 10.0, 0.0)], 20.0);
        assert_eq!(a, vec![5.0, 5.0]);
    }
}

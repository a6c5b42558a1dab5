//! The one seeded, portable RNG family of a simulation. Named sub-streams are
//! derived from (master seed, label) so adding a consumer never shifts another's
//! sequence. PCG64 (rand_pcg) gives the same numbers on every platform.

use rand::SeedableRng;

/// The simulation's RNG: PCG64 (MCG variant), the same numbers on every platform.
pub type SimRng = rand_pcg::Pcg64Mcg;

/// FNV-1a over the label, mixed with the seed by SplitMix64.
pub fn derive_seed(seed: u64, label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    splitmix(seed ^ splitmix(h))
}

/// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Construction of a named sub-stream.
pub trait SimRngExt {
    /// The stream for `label` under master seed `seed` (see [`derive_seed`]).
    fn from_seed_label(seed: u64, label: &str) -> Self;
}
impl SimRngExt for SimRng {
    fn from_seed_label(seed: u64, label: &str) -> Self {
        SimRng::seed_from_u64(derive_seed(seed, label))
    }
}
